"""Reports for people: terminal tables now; the HTML report will live here too."""
