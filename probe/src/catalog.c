/* catalog.c - see catalog.h. Adding a family = one line in families[]. */
#include "catalog.h"
#include "catalog_int.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "clock.h"
#include "compiler.h"
#include "parse.h"

extern const struct osm_family osm_family_cpu;
extern const struct osm_family osm_family_syscall;
extern const struct osm_family osm_family_mem;
extern const struct osm_family osm_family_task;
extern const struct osm_family osm_family_ctxsw;
extern const struct osm_family osm_family_file;
extern const struct osm_family osm_family_ipc;
extern const struct osm_family osm_family_net;
extern const struct osm_family osm_family_poll;
extern const struct osm_family osm_family_rt;
extern const struct osm_family osm_family_test;

const struct osm_family *const osm_families[] = {
	&osm_family_cpu,
	&osm_family_syscall,
	&osm_family_mem,
	&osm_family_task, &osm_family_ctxsw, &osm_family_file,
	&osm_family_ipc,
	&osm_family_net,
	&osm_family_poll,
	&osm_family_rt,
	&osm_family_test,
};
const size_t osm_n_families = ARRAY_SIZE(osm_families);

const char *const osm_suite_names[] = {"quick", "standard", "full", "lebench", NULL};
const unsigned osm_cat_suite_bits[] = {OSM_SUITE_QUICK, OSM_SUITE_STANDARD, OSM_SUITE_FULL,
				      OSM_SUITE_LEBENCH};

unsigned osm_suite_bit(const char *name)
{
	for (int i = 0; osm_suite_names[i]; i++)
		if (!strcmp(name, osm_suite_names[i]))
			return osm_cat_suite_bits[i];
	return 0;
}

const char *osm_unit_name(enum osm_unit u)
{
	switch (u) {
	case OSM_UNIT_NS: return "ns";
	case OSM_UNIT_BYTES_PER_S: return "bytes_per_s";
	case OSM_UNIT_COUNT: return "count";
	}
	return "?";
}

void osm_full_name(const struct osm_family *f, const struct osm_bench *b, char *buf, size_t len)
{
	snprintf(buf, len, "%s.%s", f->name, b->name);
}

const struct osm_bench *osm_find_bench(const char *full, const struct osm_family **fam)
{
	const char *dot = strchr(full, '.');
	if (!dot)
		return NULL;
	size_t flen = (size_t)(dot - full);
	for (size_t i = 0; i < osm_n_families; i++) {
		const struct osm_family *f = osm_families[i];
		if (strlen(f->name) != flen || strncmp(f->name, full, flen))
			continue;
		for (size_t k = 0; k < f->n; k++) {
			if (!strcmp(f->benches[k].name, dot + 1)) {
				if (fam)
					*fam = f;
				return &f->benches[k];
			}
		}
	}
	return NULL;
}

int osm_nparams(const struct osm_bench *b)
{
	int n = 0;
	while (b->params && b->params[n].name)
		n++;
	return n;
}

const char *osm_cat_ptype_name(enum osm_ptype t)
{
	switch (t) {
	case OSM_P_INT: return "int";
	case OSM_P_SIZE: return "size";
	case OSM_P_ENUM: return "enum";
	case OSM_P_STR: return "string";
	}
	return "?";
}

size_t osm_cat_str_max(const struct osm_param *p)
{
	return p->max_len && p->max_len < PATH_MAX ? p->max_len : PATH_MAX - 1;
}

const char *osm_cat_str_max_why(const struct osm_param *p)
{
	return p->max_len && p->max_len < PATH_MAX && p->max_len_why ? p->max_len_why : "PATH_MAX - 1";
}

void osm_instance_init(struct osm_instance *in, const struct osm_family *f, const struct osm_bench *b)
{
	memset(in, 0, sizeof(*in));
	in->fam = f;
	in->bench = b;
	for (int i = 0; i < osm_nparams(b); i++) {
		in->params[i].i = b->params[i].def;
		in->params[i].s = b->params[i].def_str ? b->params[i].def_str : "";
	}
}

void osm_cat_list_choices(const struct osm_param *p, char *buf, size_t len)
{
	size_t off = 0;
	buf[0] = 0;
	for (int i = 0; p->choices && p->choices[i]; i++)
		off += (size_t)snprintf(buf + off, off < len ? len - off : 0, "%s%s", i ? ", " : "",
					p->choices[i]);
}

static void list_param_names(const struct osm_bench *b, char *buf, size_t len)
{
	size_t off = 0;
	int n = osm_nparams(b);
	buf[0] = 0;
	if (!n) {
		snprintf(buf, len, "none");
		return;
	}
	for (int i = 0; i < n; i++)
		off += (size_t)snprintf(buf + off, off < len ? len - off : 0, "%s%s", i ? ", " : "",
					b->params[i].name);
}

int osm_instance_set(struct osm_instance *in, const char *key, const char *value,
		     char *err, size_t len)
{
	const struct osm_bench *b = in->bench;
	char name[128], why[300];
	osm_full_name(in->fam, b, name, sizeof(name));
	for (int i = 0; i < osm_nparams(b); i++) {
		const struct osm_param *p = &b->params[i];
		if (strcmp(p->name, key))
			continue;
		int64_t v = 0;
		switch (p->type) {
		case OSM_P_INT:
			if (osm_parse_int(value, p->min, p->max, &v, why, sizeof(why)))
				goto bad;
			in->params[i].i = v;
			return 0;
		case OSM_P_SIZE:
			if (osm_parse_size(value, p->min, p->max, &v, why, sizeof(why)))
				goto bad;
			in->params[i].i = v;
			return 0;
		case OSM_P_ENUM:
			for (int c = 0; p->choices[c]; c++) {
				if (!strcmp(p->choices[c], value)) {
					in->params[i].i = c;
					return 0;
				}
			}
			{
				char ch[256];
				osm_cat_list_choices(p, ch, sizeof(ch));
				snprintf(why, sizeof(why), "'%s' is not allowed; allowed: %s", value, ch);
			}
			goto bad;
		case OSM_P_STR:
			/* a path: longer than its limit it could only be cut, or fail later */
			if (strlen(value) > osm_cat_str_max(p)) {
				snprintf(why, sizeof(why), "the value has %zu bytes; at most %zu bytes (%s)", strlen(value),
					 osm_cat_str_max(p), osm_cat_str_max_why(p));
				goto bad;
			}
			in->params[i].s = value;
			return 0;
		}
	bad:
		snprintf(err, len, "%s: parameter %s: %s", name, key, why);
		return -2;
	}
	char names[256];
	list_param_names(b, names, sizeof(names));
	snprintf(err, len, "%s has no parameter '%s'; its parameters: %s", name, key, names);
	return -1;
}

int osm_instance_apply(struct osm_instance *in, const char *assignments, char *err, size_t len)
{
	char *buf = strdup(assignments), *save = NULL;
	int r = 0;
	if (!buf) {
		snprintf(err, len, "out of memory");
		return -2;
	}
	for (char *tok = strtok_r(buf, ",", &save); tok && !r; tok = strtok_r(NULL, ",", &save)) {
		char *eq = strchr(tok, '=');
		if (!eq) {
			snprintf(err, len, "'%s' is not KEY=VALUE", tok);
			r = -2;
			break;
		}
		*eq = 0;
		/* buf is freed below, so string values cannot be pointed at:
		 * STR params are not swept. */
		r = osm_instance_set(in, tok, eq + 1, err, len);
	}
	free(buf);
	return r;
}

int osm_cat_sweep_of(const struct osm_family *f, const struct osm_bench *b, const char *sweep,
		     struct osm_instance **out)
{
	int n = 1;
	for (const char *p = sweep; p && *p; p++)
		n += *p == ';';
	struct osm_instance *v = calloc((size_t)n, sizeof(*v));
	if (!v)
		return -1;
	if (!sweep) {
		osm_instance_init(&v[0], f, b);
		*out = v;
		return 1;
	}
	char err[512], *buf = strdup(sweep), *save = NULL;
	int k = 0;
	for (char *tok = buf ? strtok_r(buf, ";", &save) : NULL; tok; tok = strtok_r(NULL, ";", &save)) {
		osm_instance_init(&v[k], f, b);
		if (osm_instance_apply(&v[k], tok, err, sizeof(err))) {
			k = -1;
			break;
		}
		k++;
	}
	if (!buf || k < 0) {
		free(buf);
		free(v);
		return -1;
	}
	free(buf);
	*out = v;
	return k;
}

int osm_sweep_instances(const struct osm_family *f, const struct osm_bench *b,
			struct osm_instance **out)
{
	return osm_cat_sweep_of(f, b, b->sweep, out);
}

static const struct osm_family *family_named(const char *name, size_t len)
{
	for (size_t i = 0; i < osm_n_families; i++)
		if (strlen(osm_families[i]->name) == len && !strncmp(osm_families[i]->name, name, len))
			return osm_families[i];
	return NULL;
}

int osm_lebench_instance(const struct osm_lebench_row *r, struct osm_instance *out, char *err, size_t len)
{
	const char *dot = strchr(r->bench, '.');
	if (!dot || !family_named(r->bench, (size_t)(dot - r->bench))) {
		snprintf(err, len, "LEBench row '%s': the %.*s family is not built yet", r->name,
			 dot ? (int)(dot - r->bench) : (int)strlen(r->bench), r->bench);
		return 1;
	}
	const struct osm_family *f;
	const struct osm_bench *b = osm_find_bench(r->bench, &f);
	if (!b) {
		snprintf(err, len, "LEBench row '%s': no benchmark %s in its family", r->name, r->bench);
		return -1;
	}
	osm_instance_init(out, f, b);
	char why[512];
	if (r->params && osm_instance_apply(out, r->params, why, sizeof(why))) {
		snprintf(err, len, "LEBench row '%s': %s", r->name, why);
		return -1;
	}
	if (r->exact_batch < 1) {
		snprintf(err, len, "LEBench row '%s': exact_batch must be at least 1", r->name);
		return -1;
	}
	out->row = r;
	return 0;
}

/* The lebench suite: the rows of the LEBench table whose benchmark exists,
 * in LEBench's order. */
static int lebench_suite(struct osm_instance **out)
{
	struct osm_instance *all = calloc(osm_n_lebench_rows, sizeof(*all));
	if (!all)
		return -1;
	int n = 0;
	char err[512];
	for (size_t i = 0; i < osm_n_lebench_rows; i++) {
		int r = osm_lebench_instance(&osm_lebench_rows[i], &all[n], err, sizeof(err));
		if (r < 0) {
			free(all);
			return -1;
		}
		n += r == 0;
	}
	*out = all;
	return n;
}

/* Whether some available LEBench row uses benchmark b. */
int osm_cat_in_lebench(const struct osm_bench *b)
{
	struct osm_instance in;
	char err[512];
	for (size_t i = 0; i < osm_n_lebench_rows; i++)
		if (osm_lebench_instance(&osm_lebench_rows[i], &in, err, sizeof(err)) == 0 && in.bench == b)
			return 1;
	return 0;
}

int osm_suite_instances(unsigned bit, struct osm_instance **out)
{
	if (bit == OSM_SUITE_LEBENCH)
		return lebench_suite(out);
	struct osm_instance *all = NULL;
	int n = 0;
	for (size_t i = 0; i < osm_n_families; i++) {
		const struct osm_family *f = osm_families[i];
		for (size_t k = 0; k < f->n; k++) {
			const struct osm_bench *b = &f->benches[k];
			if (!(b->suites & bit) || (b->flags & OSM_HIDDEN))
				continue;
			struct osm_instance *s;
			const char *sw = bit == OSM_SUITE_FULL && b->sweep_full ? b->sweep_full : b->sweep;
			int m = osm_cat_sweep_of(f, b, sw, &s);
			if (m < 0) {
				free(all);
				return -1;
			}
			struct osm_instance *na = realloc(all, (size_t)(n + m) * sizeof(*all));
			if (!na) {
				free(s);
				free(all);
				return -1;
			}
			all = na;
			memcpy(all + n, s, (size_t)m * sizeof(*s));
			n += m;
			free(s);
		}
	}
	*out = all;
	return n;
}

/* ", k=v" for each value of in that differs from its default. */
static void label_values(const struct osm_instance *in, char *buf, size_t len)
{
	size_t off = 0;
	char sh[OSM_SHOW_LEN];
	buf[0] = 0;
	for (int i = 0; i < osm_nparams(in->bench) && off < len; i++) {
		const struct osm_param *p = &in->bench->params[i];
		const struct osm_pval *v = &in->params[i];
		int n = 0;
		if (p->type == OSM_P_STR && strcmp(v->s, p->def_str ? p->def_str : ""))
			n = snprintf(buf + off, len - off, ", %s=%s", p->name, osm_shorten(v->s, sh, sizeof(sh)));
		else if (p->type == OSM_P_ENUM && v->i != p->def)
			n = snprintf(buf + off, len - off, ", %s=%s", p->name, p->choices[v->i]);
		else if (p->type != OSM_P_STR && p->type != OSM_P_ENUM && v->i != p->def)
			n = snprintf(buf + off, len - off, ", %s=%lld", p->name, (long long)v->i);
		off += n > 0 ? (size_t)n : 0;
	}
}

int osm_instance_check(const struct osm_instance *in, char *err, size_t len)
{
	char why[1024], name[128], vals[600];
	if (!in->bench->check)
		return 0;
	why[0] = 0;
	if (!in->bench->check(in->bench, in->params, why, sizeof(why)))
		return 0;
	osm_full_name(in->fam, in->bench, name, sizeof(name));
	label_values(in, vals, sizeof(vals));
	if (vals[0])
		snprintf(err, len, "%s (%s): %s", name, vals + 2, why);
	else
		snprintf(err, len, "%s (its defaults): %s", name, why);
	return -1;
}

/* 1 (err set) when a sweep string does not parse for b, or one of its
 * instances fails b's check. */
static int bad_sweep(const struct osm_family *f, const struct osm_bench *b, const char *sweep,
		     const char *name, char *err, size_t len)
{
	if (!sweep)
		return 0;
	struct osm_instance *s;
	int m = osm_cat_sweep_of(f, b, sweep, &s);
	if (m < 0) {
		snprintf(err, len, "%s: bad sweep '%s'", name, sweep);
		return 1;
	}
	for (int i = 0; i < m; i++)
		if (osm_instance_check(&s[i], err, len)) {
			free(s);
			return 1;
		}
	free(s);
	return 0;
}

int osm_catalog_check(char *err, size_t len)
{
	char name[128], other[128];
	for (size_t i = 0; i < osm_n_families; i++) {
		const struct osm_family *f = osm_families[i];
		for (size_t k = 0; k < f->n; k++) {
			const struct osm_bench *b = &f->benches[k];
			osm_full_name(f, b, name, sizeof(name));
			if (!b->name || !b->desc || !b->run) {
				snprintf(err, len, "%s: name, desc and run are required", name);
				return -1;
			}
			for (size_t i2 = 0; i2 < osm_n_families; i2++)
				for (size_t k2 = 0; k2 < osm_families[i2]->n; k2++) {
					const struct osm_bench *b2 = &osm_families[i2]->benches[k2];
					osm_full_name(osm_families[i2], b2, other, sizeof(other));
					if (b2 != b && !strcmp(name, other)) {
						snprintf(err, len, "%s: duplicate name", name);
						return -1;
					}
				}
			int np = osm_nparams(b);
			if (np > OSM_MAX_PARAMS) {
				snprintf(err, len, "%s: more than %d parameters", name, OSM_MAX_PARAMS);
				return -1;
			}
			for (int p = 0; p < np; p++) {
				const struct osm_param *pp = &b->params[p];
				int bad = 0;
				if (pp->type == OSM_P_INT || pp->type == OSM_P_SIZE)
					bad = pp->min > pp->max || pp->def < pp->min || pp->def > pp->max;
				else if (pp->type == OSM_P_ENUM) {
					int nc = 0;
					while (pp->choices && pp->choices[nc])
						nc++;
					bad = nc == 0 || pp->def < 0 || pp->def >= nc;
				}
				if (bad || !pp->help) {
					snprintf(err, len, "%s: parameter %s: default outside its range, or no help",
						 name, pp->name);
					return -1;
				}
			}
			if ((b->flags & OSM_HIDDEN) && b->suites) {
				snprintf(err, len, "%s: a hidden benchmark cannot be in a suite", name);
				return -1;
			}
			if (bad_sweep(f, b, b->sweep, name, err, len) || bad_sweep(f, b, b->sweep_full, name, err, len))
				return -1;
			if (b->suites & OSM_SUITE_LEBENCH) {
				snprintf(err, len, "%s: the lebench suite is the LEBench table (lebench.c), not a suite bit", name);
				return -1;
			}
		}
	}
	for (size_t i = 0; i < osm_n_lebench_rows; i++) {
		const struct osm_lebench_row *r = &osm_lebench_rows[i];
		struct osm_instance in;
		if (!r->name || !r->bench || !r->region) {
			snprintf(err, len, "LEBench row %zu: name, bench and region are required", i);
			return -1;
		}
		if (osm_lebench_instance(r, &in, err, len) < 0)
			return -1;
		for (size_t k = 0; k < i; k++)
			if (!strcmp(osm_lebench_rows[k].name, r->name)) {
				snprintf(err, len, "LEBench row '%s': duplicate name", r->name);
				return -1;
			}
	}
	return 0;
}

void osm_cat_emit_param_value(struct osm_json *j, const char *key, const struct osm_param *p,
			     const struct osm_pval *v)
{
	switch (p->type) {
	case OSM_P_INT:
	case OSM_P_SIZE:
		osm_json_int(j, key, v->i);
		break;
	case OSM_P_ENUM:
		osm_json_str(j, key, p->choices[v->i]);
		break;
	case OSM_P_STR:
		osm_json_str(j, key, v->s);
		break;
	}
}

void osm_emit_params(struct osm_json *j, const char *key, const struct osm_instance *in)
{
	osm_json_obj_begin(j, key);
	for (int i = 0; i < osm_nparams(in->bench); i++)
		osm_cat_emit_param_value(j, in->bench->params[i].name, &in->bench->params[i], &in->params[i]);
	osm_json_obj_end(j);
}

