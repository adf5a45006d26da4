"""Flame graphs as one self-contained SVG file: frames as rectangles, the
root at the bottom, each frame as wide as its weight; a tooltip per frame;
click to zoom, "Reset zoom", "Search" (a substring or regular expression;
Ctrl-F too) with the matched share. Inline script and style only: the file
loads nothing, and without its script it is still a correct static image.

The differential graph draws B's stacks, each frame coloured by how its
self time per operation (the share of that exact stack ending there times
the side's ns per operation: hotspots.timed) moved from A to B: red slower,
blue faster, white the same, the saturation |change| over the largest
|change|. A frame with no weight in A on its path is new: outlined in
dashes (when wide enough to show it) and said so in its tooltip. Without both sides' ns per operation
(a folded file has no median), the colour is the change of self share.
Frames only in A have no width in B: the largest are listed under the graph.
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass, field
from typing import Callable, Iterator
from xml.sax.saxutils import escape

from ..fmt import fmt_quantity
from .folded import DEPTH_SHOWN, Stacks, display_name, is_kernel

WIDTH = 1200
FRAME_H = 17
TOP = 56  # title, subtitle, controls (each line of a wrapped title or subtitle adds LINE_H)
BOTTOM = 36  # the details line and notes
MIN_PX = 0.5  # frames narrower than this are not drawn (about 0.04 % of the width)
FONT = 12
CHAR_W = 7.0  # approximate width of a character of the 12 px monospace font
# The header's and the notes' text is wrapped to the width at a wider guess:
# a monospace font's advance is 0.60 em (DejaVu Sans Mono 0.602, Courier and
# Liberation Mono 0.600); the spare is for a browser's fallback font.
EM = 0.62
TITLE_FONT = 16
LINE_H = 16  # px between lines of the header


@dataclass(slots=True)
class Node:
    name: str
    total: int = 0
    self_weight: int = 0
    children: dict[str, "Node"] = field(default_factory=dict)
    a_total: int = 0  # the differential graph: A's weights of the same path (root to this frame)
    a_self: int = 0


def build_tree(stacks: Stacks) -> Node:
    """The stacks as a tree of frames, to DEPTH_SHOWN levels (a node's total counts every stack through it)."""
    root = Node("all")
    for frames, w in stacks:
        root.total += w
        node = root
        for f in frames[:DEPTH_SHOWN]:
            child = node.children.get(f)
            if child is None:
                child = node.children[f] = Node(f)
            node = child
            node.total += w
        if len(frames) <= DEPTH_SHOWN:
            node.self_weight += w
    return root


def _overlay(root: Node, a: Stacks) -> dict[tuple[int, str], list]:
    """A's weights onto B's tree (`root`): each node's a_total and a_self.
    Returns A's frames B lacks, whose caller B has: {(id(caller), frame):
    [A's weight, the path's last frames, whether it has more]}."""
    only_a: dict[tuple[int, str], list] = {}
    for frames, w in a:
        root.a_total += w
        node = root
        for i, f in enumerate(frames[:DEPTH_SHOWN]):
            child = node.children.get(f)
            if child is None:
                entry = only_a.setdefault((id(node), f), [0, frames[max(0, i - 2): i + 1], i > 2])
                entry[0] += w
                break
            node = child
            node.a_total += w
        else:
            if len(frames) <= DEPTH_SHOWN:
                node.a_self += w
    return only_a


def _nodes(root: Node) -> Iterator[Node]:
    """Every node under root (not root), depth first, without recursion."""
    todo = list(root.children.values())
    while todo:
        node = todo.pop()
        yield node
        todo.extend(node.children.values())


def _colour(name: str) -> str:
    """Deterministic: kernel frames orange, user frames blue-green, the process grey."""
    h = int.from_bytes(hashlib.blake2s(name.encode("utf-8", "replace"), digest_size=4).digest(), "big")
    v = (h % 1000) / 1000
    if is_kernel(name):
        return f"hsl({18 + 22 * v:.0f},{78 + 12 * v:.0f}%,{55 + 10 * v:.0f}%)"
    return f"hsl({175 + 40 * v:.0f},{45 + 20 * v:.0f}%,{52 + 12 * v:.0f}%)"


def _diff_colour(change: float, largest: float) -> str:
    if largest <= 0 or change == 0:
        return "rgb(245,245,245)"
    t = min(1.0, abs(change) / largest)
    fade = round(245 - 190 * t)
    return f"rgb(245,{fade},{fade})" if change > 0 else f"rgb({fade},{fade},245)"


def _label(name: str, px: float) -> str:
    chars = int(px / CHAR_W)
    if chars < 3:
        return ""
    return name if len(name) <= chars else name[: chars - 2] + ".."


_XML_INVALID = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\ud800-\udfff\ufffe\uffff]")
_XML_SPECIAL = re.compile('[&<>"\x00-\x1f\ud800-\udfff\ufffe\uffff]')  # none of these: nothing to do


def _xml(text: str, quote: bool = False) -> str:
    """`text` escaped for XML text (quote: for an attribute in double quotes), with what XML 1.0 cannot
    hold at all (a C0 control but TAB, LF and CR, such as ESC or NUL; a lone surrogate; U+FFFE, U+FFFF)
    shown as U+FFFD, so the file always parses."""
    if not _XML_SPECIAL.search(text):
        return text
    text = _XML_INVALID.sub("\ufffd", text)
    return escape(text, {'"': "&quot;", "\r": "&#13;", "\t": "&#9;", "\n": "&#10;"} if quote else {"\r": "&#13;"})


def _fmt(weight: int, unit: str) -> str:
    return f"{weight:,} {'samples' if unit == 'samples' else 'ns'}"


SCRIPT = r"""
(function () {
  var svg = document.documentElement, W = %(width)d, CH = %(char_w)s;
  var frames = Array.prototype.slice.call(document.querySelectorAll("g.f"));
  var details = document.getElementById("details"), matched = document.getElementById("matched");
  var total = %(total)d, zoomed = null, unit = "%(unit)s";
  function num(g, k) { return parseFloat(g.getAttribute("data-" + k)); }
  function fit(g, x, w) {
    var r = g.querySelector("rect"), t = g.querySelector("text"), n = g.getAttribute("data-n");
    r.setAttribute("x", x); r.setAttribute("width", Math.max(w, 0));
    t.setAttribute("x", x + 3);
    var c = Math.floor(w / CH);
    t.textContent = c < 3 ? "" : (n.length <= c ? n : n.slice(0, c - 2) + "..");
  }
  function zoom(g) {
    var x0 = num(g, "x"), w0 = num(g, "w"), d0 = num(g, "d"), s = W / w0;
    zoomed = g;
    frames.forEach(function (f) {
      var x = num(f, "x"), w = num(f, "w"), d = num(f, "d");
      var inside = x >= x0 - 1e-6 && x + w <= x0 + w0 + 1e-6;
      if (d >= d0 && inside) { f.style.display = ""; f.style.opacity = ""; fit(f, 10 + (x - x0) * s, w * s); }
      else if (d < d0 && x <= x0 + 1e-6 && x + w >= x0 + w0 - 1e-6) {
        f.style.display = ""; f.style.opacity = "0.6"; fit(f, 10, W);
      } else { f.style.display = "none"; }
    });
  }
  function reset() {
    zoomed = null;
    frames.forEach(function (f) { f.style.display = ""; f.style.opacity = ""; fit(f, 10 + num(f, "x"), num(f, "w")); });
  }
  function search(term) {
    if (term === null) return;
    var re = null;
    try { re = new RegExp(term); } catch (e) { re = null; }
    var hits = [];
    frames.forEach(function (f) {
      var n = f.getAttribute("data-n"), r = f.querySelector("rect");
      var hit = term !== "" && (re ? re.test(n) : n.indexOf(term) >= 0);
      r.setAttribute("fill", hit ? "rgb(230,0,230)" : r.getAttribute("data-fill"));
      if (hit) hits.push([num(f, "x"), num(f, "w")]);
    });
    hits.sort(function (a, b) { return a[0] - b[0]; });
    var covered = 0, end = -1;
    hits.forEach(function (h) {
      var a = Math.max(h[0], end), b = h[0] + h[1];
      if (b > a) { covered += b - a; end = b; }
    });
    matched.textContent = term === "" ? "" : "Matched: " + (100 * covered / W).toFixed(1) + "%%";
  }
  frames.forEach(function (f) {
    f.addEventListener("click", function () { zoom(f); });
    f.addEventListener("mouseover", function () { details.textContent = f.querySelector("title").textContent; });
    f.addEventListener("mouseout", function () { details.textContent = " "; });
  });
  document.getElementById("reset").addEventListener("click", reset);
  document.getElementById("search").addEventListener("click", function () {
    search(window.prompt("Search (a substring or a regular expression):", ""));
  });
  window.addEventListener("keydown", function (e) {
    if ((e.ctrlKey || e.metaKey) && (e.key === "f" || e.key === "F")) {
      e.preventDefault(); search(window.prompt("Search (a substring or a regular expression):", ""));
    }
  });
  svg.setAttribute("data-ready", "1");
})();
"""


def wrap_px(text: str, font_px: float, width: float = WIDTH) -> list[str]:
    """`text` broken at spaces into lines no wider than `width` px when drawn
    at `font_px` in a monospace font (EM per character); a word longer than
    a line is cut. Runs of whitespace become one space."""
    chars = max(8, int(width / (EM * font_px)))
    lines: list[str] = []
    current = ""
    for word in text.split():
        while len(word) > chars:
            if current:
                lines.append(current)
                current = ""
            lines.append(word[:chars])
            word = word[chars:]
        if current and len(current) + 1 + len(word) > chars:
            lines.append(current)
            current = word
        else:
            current = f"{current} {word}" if current else word
    if current or not lines:
        lines.append(current)
    return lines


def _header(title: str, subtitle: str | None) -> tuple[list[str], int]:
    """The title's and subtitle's lines and the controls, each line fitting
    the width, and where the frames start under them (TOP for one line of
    each)."""
    middle = (WIDTH + 20) / 2
    titles = wrap_px(title, TITLE_FONT)
    subtitles = wrap_px(subtitle, FONT) if subtitle and subtitle.strip() else []
    extra = LINE_H * (len(titles) - 1 + max(len(subtitles), 1) - 1)
    lines = [f'<text x="{middle}" y="{20 + LINE_H * i}" text-anchor="middle" font-size="{TITLE_FONT}">'
             f"{_xml(t)}</text>" for i, t in enumerate(titles)]
    y = 20 + LINE_H * len(titles)
    lines += [f'<text x="{middle}" y="{y + LINE_H * i}" text-anchor="middle" fill="#555">{_xml(t)}</text>'
              for i, t in enumerate(subtitles)]
    controls = TOP - 6 + extra
    lines += [f'<text id="reset" class="b" x="10" y="{controls}">Reset zoom</text>',
              f'<text id="search" class="b" x="{WIDTH - 60}" y="{controls}">Search</text>',
              f'<text id="matched" x="{WIDTH - 200}" y="{controls}"> </text>']
    return lines, TOP + extra


def _svg_open(height: int) -> list[str]:
    return [
        '<?xml version="1.0" encoding="UTF-8" standalone="no"?>',
        f'<svg xmlns="http://www.w3.org/2000/svg" version="1.1" width="{WIDTH + 20}" height="{height}" '
        f'viewBox="0 0 {WIDTH + 20} {height}" font-family="monospace" font-size="{FONT}">',
        "<style>g.f:hover rect { stroke: #000; stroke-width: 0.5; cursor: pointer; } "
        "text.b { cursor: pointer; fill: #2040a0; } text { pointer-events: none; } "
        "text.b { pointer-events: auto; }</style>",
        f'<rect x="0" y="0" width="{WIDTH + 20}" height="{height}" fill="#fdfdf5"/>',
    ]


def _layout(root: Node) -> tuple[list[tuple[Node, float, int]], int]:
    """The frames drawn (node, x, depth; flame orientation) and the depth they reach."""
    scale = WIDTH / (root.total or 1)
    drawn: list[tuple[Node, float, int]] = []
    depth_max = 0
    todo = [(child, 0.0, 0) for child in sorted(root.children.values(), key=lambda n: n.name)]
    cx = 0.0
    for i, (child, _, d) in enumerate(todo):  # siblings laid out left to right by name, as flamegraph.pl does
        todo[i] = (child, cx, d)
        cx += child.total * scale
    while todo:
        node, x, d = todo.pop()
        if node.total * scale < MIN_PX:
            continue
        drawn.append((node, x, d))
        depth_max = max(depth_max, d)
        cx = x
        for child in sorted(node.children.values(), key=lambda n: n.name):
            todo.append((child, cx, d + 1))
            cx += child.total * scale
    return drawn, depth_max


NEW_OUTLINE = 'stroke="rgb(90,0,0)" stroke-width="1" stroke-dasharray="3,2"'  # a frame new in B ...
NEW_OUTLINED_PX = 6  # ... at least this wide (narrower ones would be dashed lines across the graph)


def _frames(root: Node, fill_of: Callable[[Node], str], tip_of: Callable[[Node, str], str],
            top: int = TOP, is_new: Callable[[Node], bool] = lambda n: False) -> tuple[list[str], int]:
    """The drawn frames as SVG groups (the flame's top at `top`), and the depth they reach; a frame
    `is_new` says is new is marked data-new="1", and outlined (NEW_OUTLINE) when NEW_OUTLINED_PX wide."""
    scale = WIDTH / (root.total or 1)
    drawn, depth_max = _layout(root)
    base = top + depth_max * FRAME_H  # the root's row: the bottom of the flame
    out: list[str] = []
    for node, x, d in drawn:
        w = node.total * scale
        y = base - d * FRAME_H
        name = display_name(node.name) + (" [k]" if is_kernel(node.name) else "")
        fill = fill_of(node)
        mark, outline = (' data-new="1"', " " + NEW_OUTLINE if w >= NEW_OUTLINED_PX else "") if is_new(node) \
            else ("", "")
        out.append(
            f'<g class="f" data-n="{_xml(name, quote=True)}" data-x="{x:.3f}" data-w="{w:.3f}" '
            f'data-d="{d}"{mark}><title>{_xml(tip_of(node, name))}</title>'
            f'<rect x="{10 + x:.3f}" y="{y}" width="{w:.3f}" height="{FRAME_H - 1}" fill="{fill}" '
            f'data-fill="{fill}" rx="2"{outline}/>'
            f'<text x="{13 + x:.3f}" y="{y + FRAME_H - 5}">{_xml(_label(name, w))}</text></g>')
    return out, depth_max


def _depth_note(*profiles: Stacks) -> list[str]:
    deepest = max((len(frames) for stacks in profiles for frames, _ in stacks), default=0)
    if deepest <= DEPTH_SHOWN:
        return []
    return [f"Stacks deeper than {DEPTH_SHOWN} frames (the deepest: {deepest:,}) are drawn to that depth; "
            "the widths and the folded file count them whole."]


def _assemble(title: str, subtitle: str | None, root: Node, frames_of: Callable[[int], tuple[list[str], int]],
              unit: str, notes: list[str]) -> str:
    """The whole file: the header, the frames (`frames_of(top)`: drawn from
    `top` down, under the header as tall as the wrapped title and subtitle),
    the details line and the notes, wrapped to the width."""
    header, top = _header(title, subtitle)
    frames, depth_max = frames_of(top)
    note_lines = [line for note in notes for line in wrap_px(note, FONT)]
    height = top + (depth_max + 1) * FRAME_H + BOTTOM + FRAME_H * len(note_lines)
    foot = top + (depth_max + 1) * FRAME_H + 14
    lines = _svg_open(height) + header + frames
    lines.append(f'<text id="details" x="10" y="{foot}"> </text>')
    for i, note in enumerate(note_lines):
        lines.append(f'<text x="10" y="{foot + (i + 1) * FRAME_H}" fill="#555">{_xml(note)}</text>')
    script = SCRIPT % {"width": WIDTH, "char_w": CHAR_W, "total": root.total,
                       "unit": "samples" if unit == "samples" else "ns"}
    lines.append(f"<script><![CDATA[{script}]]></script>")
    lines.append("</svg>")
    return "\n".join(lines) + "\n"


def flamegraph_svg(stacks: Stacks, title: str, weight_unit: str, subtitle: str | None = None) -> str:
    root = build_tree(stacks)
    total = root.total or 1

    def tip(node: Node, name: str) -> str:
        return (f"{name}: {_fmt(node.total, weight_unit)} ({100 * node.total / total:.2f}% of all), "
                f"self {_fmt(node.self_weight, weight_unit)} ({100 * node.self_weight / total:.2f}%)")

    notes = [f"{_fmt(root.total, weight_unit)} in all; frames under {100 * MIN_PX / WIDTH:.2f}% of the width "
             "are not drawn. Click a frame to zoom; Search (or Ctrl-F) highlights matches."] + _depth_note(stacks)
    return _assemble(title, subtitle, root, lambda top: _frames(root, lambda n: _colour(n.name), tip, top),
                     weight_unit, notes)


def diff_flamegraph_svg(a: Stacks, b: Stacks, title: str, weight_unit: str = "samples",
                        subtitle: str | None = None, ns_a: float | None = None, ns_b: float | None = None) -> str:
    """B's stacks coloured by the change of each frame's self time per operation from A (ns_a and ns_b:
    each side's ns per operation), or of its self share when either is None (module docstring)."""
    root = build_tree(b)
    only_a = _overlay(root, a)
    na, nb = root.a_total or 1, root.total or 1
    timed = ns_a is not None and ns_b is not None
    ka, kb = (ns_a, ns_b) if timed else (1.0, 1.0)  # the self share x ns per op; x 1: the share itself

    def change(n: Node) -> float:
        return n.self_weight / nb * kb - n.a_self / na * ka  # type: ignore[operator]

    largest = max((abs(change(n)) for n in _nodes(root)), default=0.0)

    def tip(n: Node, name: str) -> str:
        new = "; new: no weight on this path in A" if n.a_total == 0 else ""
        shares = (f"total {100 * n.a_total / na:.2f}% -> {100 * n.total / nb:.2f}% "
                  f"({_fmt(n.a_total, weight_unit)} -> {_fmt(n.total, weight_unit)}), self {100 * n.a_self / na:.2f}% "
                  f"-> {100 * n.self_weight / nb:.2f}% ({n.a_self:,} -> {n.self_weight:,})")
        if not timed:
            return f"{name}: {shares}, change of self share {100 * change(n):+.2f} pp{new}"
        ns = (f"self {fmt_quantity(n.a_self / na * ka, 'ns')} -> {fmt_quantity(n.self_weight / nb * kb, 'ns')} "
              f"per op ({'+' if change(n) > 0 else ''}{fmt_quantity(change(n), 'ns')}), total "
              f"{fmt_quantity(n.a_total / na * ka, 'ns')} -> {fmt_quantity(n.total / nb * kb, 'ns')}")
        return f"{name}: {ns}; {shares}{new}"

    gone = sorted(only_a.values(), key=lambda e: -e[0])[:5]
    if timed:
        legend = (f"A {_fmt(na, weight_unit)} at {fmt_quantity(ns_a, 'ns')} per op, B {_fmt(nb, weight_unit)} at "
                  f"{fmt_quantity(ns_b, 'ns')} per op; widths are B's; red: the frame's self time per op grew "
                  f"from A to B (slower), blue: shrank (the strongest colour: {fmt_quantity(largest, 'ns')}); "
                  "outlined in dashes: new (no weight on that path in A).")
    else:
        legend = (f"A {_fmt(na, weight_unit)}, B {_fmt(nb, weight_unit)}; widths are B's; red: self share grew from "
                  f"A to B, blue: shrank (the strongest colour: {100 * largest:.2f} pp); outlined in dashes: new "
                  "(no weight on that path in A).")
    notes = [legend] + _depth_note(a, b)
    notes += [f"only in A: {'...;' if more else ''}{';'.join(display_name(f) for f in tail)} "
              f"({100 * w / na:.2f}% of A{', ' + fmt_quantity(w / na * ka, 'ns') + ' per op' if timed else ''})"
              for w, tail, more in gone]
    return _assemble(title, subtitle, root,
                     lambda top: _frames(root, lambda n: _diff_colour(change(n), largest), tip, top,
                                         is_new=lambda n: n.a_total == 0),
                     weight_unit, notes)
