/* cli_param.c - see cli_param.h. */
#include "cli_param.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "parse.h"

/* One key and every value list given for it, in command-line order. */
struct group {
	char *key;
	const char **raw; /* the text after "KEY=" of each --param KEY=... */
	int n_raw;
};

/* The distinct values of one parameter. */
struct vlist {
	struct osm_pval *v;
	int n, cap;
};

static int param_index(const struct osm_bench *b, const char *key)
{
	for (int q = 0; q < osm_nparams(b); q++)
		if (!strcmp(b->params[q].name, key))
			return q;
	return -1;
}

/* "--param KEY=RAW: " with RAW shortened, the start of every value error. */
static void value_error(char *err, size_t len, const char *key, const char *raw, const char *why)
{
	char sh[OSM_SHOW_LEN];
	snprintf(err, len, "--param %s=%s: %s", key, osm_shorten(raw, sh, sizeof(sh)), why);
}

static int vlist_add(struct vlist *l, struct osm_pval pv, enum osm_ptype type)
{
	for (int i = 0; i < l->n; i++)
		if (type == OSM_P_STR ? !strcmp(l->v[i].s, pv.s) : l->v[i].i == pv.i)
			return 0; /* given twice: measured once */
	if (l->n == OSM_MAX_PARAM_VALUES)
		return -1;
	if (l->n == l->cap) {
		int cap = l->cap ? 2 * l->cap : 16;
		struct osm_pval *nv = realloc(l->v, (size_t)cap * sizeof(*nv));
		if (!nv)
			return -2;
		l->v = nv;
		l->cap = cap;
	}
	l->v[l->n++] = pv;
	return 0;
}

static int add_checked(struct vlist *l, struct osm_pval pv, enum osm_ptype type, const char *key,
		       const char *raw, char *err, size_t len)
{
	int r = vlist_add(l, pv, type);
	if (r == -1) {
		char why[160];
		snprintf(why, sizeof(why), "more than %d values; at most %d per parameter "
			 "(a range counts each of its values)", OSM_MAX_PARAM_VALUES, OSM_MAX_PARAM_VALUES);
		value_error(err, len, key, raw, why);
	} else if (r == -2) {
		snprintf(err, len, "out of memory");
	}
	return r ? -1 : 0;
}

/* The value of one element (NUL-terminated), validated by osm_instance_set. */
static int one_value(const struct osm_instance *in, int q, const char *key, const char *elem,
		     const char *raw, struct osm_pval *out, char *err, size_t len)
{
	struct osm_instance t = *in;
	char why[512];
	if (osm_instance_set(&t, key, elem, why, sizeof(why))) {
		value_error(err, len, key, raw, why);
		return -1;
	}
	*out = t.params[q];
	return 0;
}

/* A..B of an integer parameter: every value from A to B. */
static int add_range(const struct osm_instance *in, int q, const char *key, const char *elem,
		     const char *dots, const char *raw, struct vlist *l, char *err, size_t len)
{
	const struct osm_param *p = &in->bench->params[q];
	if (p->type != OSM_P_INT) {
		char why[300];
		snprintf(why, sizeof(why), "ranges (A..B) work only for integer parameters, and %s is %s; "
			 "list its values with commas", key, p->type == OSM_P_SIZE ? "a size" : "a choice");
		value_error(err, len, key, raw, why);
		return -1;
	}
	char *lo_s = strndup(elem, (size_t)(dots - elem));
	if (!lo_s) {
		snprintf(err, len, "out of memory");
		return -1;
	}
	struct osm_pval lo, hi;
	int r = one_value(in, q, key, lo_s, raw, &lo, err, len);
	free(lo_s);
	if (r || one_value(in, q, key, dots + 2, raw, &hi, err, len))
		return -1;
	if (hi.i < lo.i) {
		char why[160];
		snprintf(why, sizeof(why), "the range %lld..%lld is empty; write it low..high",
			 (long long)lo.i, (long long)hi.i);
		value_error(err, len, key, raw, why);
		return -1;
	}
	if ((uint64_t)(hi.i - lo.i) >= (uint64_t)OSM_MAX_PARAM_VALUES) {
		char why[200];
		snprintf(why, sizeof(why), "the range %lld..%lld has %llu values; at most %d per parameter",
			 (long long)lo.i, (long long)hi.i, (unsigned long long)(hi.i - lo.i) + 1,
			 OSM_MAX_PARAM_VALUES);
		value_error(err, len, key, raw, why);
		return -1;
	}
	for (int64_t v = lo.i;; v++) {
		lo.i = v;
		if (add_checked(l, lo, p->type, key, raw, err, len))
			return -1;
		if (v == hi.i)
			return 0;
	}
}

/* The values one --param text gives parameter q of in's benchmark. */
static int expand_raw(const struct osm_instance *in, int q, const char *key, const char *raw,
		      struct vlist *l, char *err, size_t len)
{
	enum osm_ptype type = in->bench->params[q].type;
	struct osm_pval pv;
	if (type == OSM_P_STR) /* a path: the whole text, commas and ".." included */
		return one_value(in, q, key, raw, raw, &pv, err, len) ||
		       add_checked(l, pv, type, key, raw, err, len) ? -1 : 0;
	for (const char *s = raw;;) {
		const char *comma = strchr(s, ',');
		size_t n = comma ? (size_t)(comma - s) : strlen(s);
		char *elem = strndup(s, n);
		if (!elem) {
			snprintf(err, len, "out of memory");
			return -1;
		}
		const char *dots = strstr(elem, "..");
		int r = dots ? add_range(in, q, key, elem, dots, raw, l, err, len)
			     : one_value(in, q, key, elem, raw, &pv, err, len) ||
				       add_checked(l, pv, type, key, raw, err, len);
		free(elem);
		if (r)
			return -1;
		if (!comma)
			return 0;
		s = comma + 1;
	}
}

static int push(struct osm_instance **v, size_t *n, size_t *cap, const struct osm_instance *in)
{
	if (*n == *cap) {
		size_t c = *cap ? 2 * *cap : 64;
		struct osm_instance *nv = realloc(*v, c * sizeof(*nv));
		if (!nv)
			return -1;
		*v = nv;
		*cap = c;
	}
	(*v)[(*n)++] = *in;
	return 0;
}

/* Applies one key to every instance that has it; the others pass through. */
static int apply_group(struct osm_instance **all, int *n, const struct group *g, char *err, size_t len)
{
	struct osm_instance *out = NULL;
	size_t n_out = 0, cap = 0;
	const struct osm_param *cached = NULL;
	struct vlist vl = {0};
	char missing[512] = "";
	int used = 0;
	for (int i = 0; i < *n; i++) {
		const struct osm_instance *in = &(*all)[i];
		int q = param_index(in->bench, g->key);
		if (q < 0) {
			struct osm_instance t = *in;
			if (!missing[0])
				osm_instance_set(&t, g->key, "", missing, sizeof(missing));
			if (push(&out, &n_out, &cap, in))
				goto oom;
			continue;
		}
		used = 1;
		if (&in->bench->params[q] != cached) { /* the values depend on the parameter only */
			vl.n = 0;
			for (int k = 0; k < g->n_raw; k++)
				if (expand_raw(in, q, g->key, g->raw[k], &vl, err, len))
					goto fail;
			cached = &in->bench->params[q];
		}
		if (n_out + (size_t)vl.n > OSM_MAX_INSTANCES) {
			snprintf(err, len, "--param %s: the run would have more than %d benchmark instances "
				 "(the product of the --param lists); at most %d", g->key, OSM_MAX_INSTANCES,
				 OSM_MAX_INSTANCES);
			goto fail;
		}
		for (int k = 0; k < vl.n; k++) {
			struct osm_instance t = *in;
			t.params[q] = vl.v[k];
			if (push(&out, &n_out, &cap, &t))
				goto oom;
		}
	}
	if (!used) {
		snprintf(err, len, "--param %s: %s", g->key, missing);
		goto fail;
	}
	free(vl.v);
	free(*all);
	*all = out;
	*n = (int)n_out;
	return 0;
oom:
	snprintf(err, len, "out of memory");
fail:
	free(vl.v);
	free(out);
	return -1;
}

static void free_groups(struct group *g, int n)
{
	for (int i = 0; i < n; i++) {
		free(g[i].key);
		free(g[i].raw);
	}
	free(g);
}

/* The assignments grouped by key, keys in order of first appearance. */
static int make_groups(const char *const *assign, int n_assign, struct group **out, int *n_out)
{
	struct group *g = calloc((size_t)n_assign + 1, sizeof(*g));
	int n = 0;
	if (!g)
		return -1;
	for (int a = 0; a < n_assign; a++) {
		const char *eq = strchr(assign[a], '=');
		size_t kl = (size_t)(eq - assign[a]);
		int k = 0;
		while (k < n && !(strlen(g[k].key) == kl && !strncmp(g[k].key, assign[a], kl)))
			k++;
		if (k == n) {
			g[n].key = strndup(assign[a], kl);
			g[n].raw = calloc((size_t)n_assign, sizeof(*g[n].raw));
			n++;
			if (!g[k].key || !g[k].raw) {
				free_groups(g, n);
				return -1;
			}
		}
		g[k].raw[g[k].n_raw++] = eq + 1;
	}
	*out = g;
	*n_out = n;
	return 0;
}

int osm_params_apply(struct osm_instance **all, int *n, const char *const *assign, int n_assign,
		     char *err, size_t len)
{
	struct group *g;
	int n_groups;
	if (make_groups(assign, n_assign, &g, &n_groups)) {
		snprintf(err, len, "out of memory");
		goto fail;
	}
	for (int k = 0; k < n_groups; k++) {
		if (apply_group(all, n, &g[k], err, len)) {
			free_groups(g, n_groups);
			goto fail;
		}
	}
	free_groups(g, n_groups);
	return 0;
fail:
	free(*all);
	*all = NULL;
	*n = 0;
	return -1;
}
