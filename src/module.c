/*
 * module.c - the module registry and what a module reads of its stage:
 * its arguments (typed, checked), instance, ports and schemas.
 *
 * The registry is a process-wide array of river__module entries, each
 * owning a copy of the declaration and its parsed argument list
 * (NAME:TYPE[=DEFAULT], comma-separated). Registration is not
 * thread-safe: register modules before flows are built. Argument values
 * are kept as text on the stage (src/flow.c) and converted here, by one
 * parser per type, both when the flow is built (to reject bad values
 * early) and when a module asks for them.
 */
#include "flow_internal.h"
#include "modules/modules.h"  /* river__modules_builtin, the registry's hook */

#include <ctype.h>
#include <stdarg.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

static river__module **mods;
static int nmods, mods_cap;
static int builtins_done;   /* the built-in modules are registered */
static const char *loading;  /* the plugin being loaded (src/plugin.c) */

static const char *const type_names[] = {"str", "int", "uint", "size",
                                         "double", "bool", "field"};
#define NTYPES ((int)(sizeof type_names / sizeof type_names[0]))

int river__name_ok(const char *name, size_t max)
{
  size_t i;

  if (name == NULL || name[0] == '\0')
    return 0;
  for (i = 0; name[i] != '\0'; i++)
    if (i >= max || !(isalnum((unsigned char)name[i]) || name[i] == '_'
                      || name[i] == '-'))
      return 0;
  return 1;
}

/* A field or argument name: a letter or '_', then letters, digits, '_'. */
static int ident_ok(const char *s, size_t max)
{
  return river__name_ok(s, max) && strchr(s, '-') == NULL
         && !isdigit((unsigned char)s[0]);
}

/* ------------------------------------------------------- conversions */

static int parse_int(const char *s, int64_t *v)
{
  char *end;
  long long x;

  if (!(isdigit((unsigned char)s[0]) || s[0] == '-' || s[0] == '+'))
    return RIVER_EINVAL;
  errno = 0;
  x = strtoll(s, &end, 10);
  if (end == s || *end != '\0' || errno != 0)
    return RIVER_EINVAL;
  *v = x;
  return RIVER_SUCCESS;
}

/* Digits; for a size, digits and a suffix: river_parse_size's rule
 * (river/units.h), the same as the river command's. */
static int parse_uint(const char *s, int suffix, uint64_t *v)
{
  if (!suffix && (s[0] == '\0' || s[strspn(s, "0123456789")] != '\0'))
    return RIVER_EINVAL;
  return river_parse_size(s, v);
}

static int parse_double(const char *s, double *v)
{
  char *end;
  double x;

  if (s[0] == '\0' || isspace((unsigned char)s[0]))
    return RIVER_EINVAL;
  errno = 0;
  x = strtod(s, &end);
  if (end == s || *end != '\0' || errno != 0 || !isfinite(x))
    return RIVER_EINVAL;
  *v = x;
  return RIVER_SUCCESS;
}

static int parse_bool(const char *s, int64_t *v)
{
  static const char *const yes[] = {"true", "yes", "on", "1"};
  static const char *const no[] = {"false", "no", "off", "0"};
  int i;

  for (i = 0; i < 4; i++) {
    if (strcasecmp(s, yes[i]) == 0) {
      *v = 1;
      return RIVER_SUCCESS;
    }
    if (strcasecmp(s, no[i]) == 0) {
      *v = 0;
      return RIVER_SUCCESS;
    }
  }
  return RIVER_EINVAL;
}

int river__arg_parse(river__arg_type t, const char *text, int64_t *i,
                     uint64_t *u, double *d)
{
  int64_t iv = 0;
  uint64_t uv = 0;
  double dv = 0;
  int rc;

  if (text == NULL)
    return RIVER_EINVAL;
  switch (t) {
  case RIVER__ARG_STR: return RIVER_SUCCESS;
  case RIVER__ARG_FIELD:
    return ident_ok(text, RIVER_SCHEMA_MAX_NAME) ? RIVER_SUCCESS
                                                 : RIVER_EINVAL;
  case RIVER__ARG_INT: rc = parse_int(text, &iv); break;
  case RIVER__ARG_UINT: rc = parse_uint(text, 0, &uv); break;
  case RIVER__ARG_SIZE: rc = parse_uint(text, 1, &uv); break;
  case RIVER__ARG_DOUBLE: rc = parse_double(text, &dv); break;
  case RIVER__ARG_BOOL: rc = parse_bool(text, &iv); break;
  default: return RIVER_EINVAL;
  }
  if (rc == RIVER_SUCCESS) {
    if (i != NULL)
      *i = iv;
    if (u != NULL)
      *u = uv;
    if (d != NULL)
      *d = dv;
  }
  return rc;
}

const char *river__arg_expect(river__arg_type t)
{
  switch (t) {
  case RIVER__ARG_INT: return "an integer";
  case RIVER__ARG_UINT: return "a non-negative integer";
  case RIVER__ARG_SIZE: return "a size (" RIVER_SIZE_SUFFIXES ")";
  case RIVER__ARG_DOUBLE: return "a number";
  case RIVER__ARG_BOOL: return "a boolean (true or false)";
  case RIVER__ARG_FIELD: return "a field name";
  default: return "a string";
  }
}

/* ------------------------------------------------------ declarations */

static void free_module(river__module *m)
{
  int i;

  if (m == NULL)
    return;
  for (i = 0; i < m->nargs; i++)
    free(m->args[i].def);
  free(m->args);
  free((char *)m->decl.args);
  free((char *)m->decl.doc);
  free(m->plugin);
  free(m);
}

/* Parse one "NAME:TYPE[=DEFAULT]" (trimmed, in place) into a. */
static int parse_decl_arg(const char *module, char *item, river__arg_decl *a)
{
  char *colon = strchr(item, ':'), *eq;
  int t;

  if (colon == NULL) {
    river__error("module '%s': argument '%s' has no ':TYPE'", module, item);
    return RIVER_EINVAL;
  }
  *colon = '\0';
  eq = strchr(colon + 1, '=');
  if (eq != NULL)
    *eq = '\0';
  if (!ident_ok(item, RIVER__ARG_NAME_MAX)) {
    river__error("module '%s': bad argument name '%s' (1..%d letters, "
                 "digits, '_', starting with a letter or '_')", module, item,
                 RIVER__ARG_NAME_MAX);
    return RIVER_EINVAL;
  }
  snprintf(a->name, sizeof a->name, "%s", item);
  for (t = 0; t < NTYPES && strcmp(colon + 1, type_names[t]) != 0; t++)
    ;
  if (t == NTYPES) {
    river__error("module '%s': argument '%s': unknown type '%s' (str, int, "
                 "uint, size, double, bool or field)", module, item,
                 colon + 1);
    return RIVER_EINVAL;
  }
  a->type = (river__arg_type)t;
  if (eq == NULL)
    return RIVER_SUCCESS;
  if (river__arg_parse(a->type, eq + 1, NULL, NULL, NULL) != RIVER_SUCCESS) {
    river__error("module '%s': argument '%s': default '%s' is not %s",
                 module, item, eq + 1, river__arg_expect(a->type));
    return RIVER_EINVAL;
  }
  return (a->def = strdup(eq + 1)) ? RIVER_SUCCESS : RIVER_ENOMEM;
}

static char *trim(char *s)
{
  char *e;

  while (isspace((unsigned char)*s))
    s++;
  e = s + strlen(s);
  while (e > s && isspace((unsigned char)e[-1]))
    *--e = '\0';
  return s;
}

/* Fill m->args from m->decl.args (the module's own copy). */
static int parse_decl_args(river__module *m)
{
  char *text, *item, *save = NULL;
  int n = 1, rc = RIVER_SUCCESS, i;
  const char *p;

  if (m->decl.args == NULL || trim((char *)m->decl.args)[0] == '\0')
    return RIVER_SUCCESS;
  for (p = m->decl.args; *p; p++)
    n += *p == ',';
  if ((m->args = calloc((size_t)n, sizeof *m->args)) == NULL
      || (text = strdup(m->decl.args)) == NULL)
    return RIVER_ENOMEM;
  for (item = strtok_r(text, ",", &save); item && rc == RIVER_SUCCESS;
       item = strtok_r(NULL, ",", &save)) {
    rc = parse_decl_arg(m->name, trim(item), &m->args[m->nargs]);
    for (i = 0; rc == RIVER_SUCCESS && i < m->nargs; i++)
      if (strcmp(m->args[i].name, m->args[m->nargs].name) == 0) {
        river__error("module '%s': argument '%s' %s", m->name,
                     m->args[i].name, m->nargs >= n - RIVER__NSTAGE_ARGS
                     ? "is one every stage takes (" RIVER__STAGE_ARGS ")"
                     : "declared twice");
        rc = RIVER_EINVAL;
      }
    m->nargs++;
  }
  if (rc == RIVER_SUCCESS && m->nargs != n) {
    river__error("module '%s': empty argument in \"%s\"", m->name,
                 m->decl.args);
    rc = RIVER_EINVAL;
  }
  free(text);
  return rc;
}

static int blank(const char *s)
{
  while (isspace((unsigned char)*s))
    s++;
  return *s == '\0';
}

/* A module's declared arguments followed by those every stage takes
 * (RIVER__STAGE_ARGS: the emulation's cpu_rate and perturb), in a new
 * string. */
static char *with_stage_args(const char *args)
{
  size_t len = args ? strlen(args) : 0;
  char *all = malloc(len + sizeof "," RIVER__STAGE_ARGS);

  if (all != NULL)
    sprintf(all, "%s%s" RIVER__STAGE_ARGS, args ? args : "",
            args && !blank(args) ? "," : "");
  return all;
}

static int decl_ok(const char *name, const river_module_decl *d)
{
  if (d->min_inputs < 0 || d->min_outputs < 0
      || (d->max_inputs != -1 && d->max_inputs < d->min_inputs)
      || (d->max_outputs != -1 && d->max_outputs < d->min_outputs)) {
    river__error("module '%s': bad port counts (inputs %d..%d, outputs "
                 "%d..%d; max -1 means any)", name, d->min_inputs,
                 d->max_inputs, d->min_outputs, d->max_outputs);
    return 0;
  }
  if (d->shares_rank != 0 && d->shares_rank != 1) {
    river__error("module '%s': shares_rank must be 0 or 1", name);
    return 0;
  }
  return 1;
}

int river_module_register(const char *name, river_module_fn fn,
                          const river_module_decl *decl, void *user)
{
  river__module *m, **grown;
  const river__module *found;
  int rc;

  if (fn == NULL || decl == NULL || !river__name_ok(name, RIVER__NAME_MAX)) {
    river__error("river_module_register: %s", fn == NULL ? "no function"
                 : decl == NULL ? "no declaration"
                 : "bad name (1..63 letters, digits, '_', '-')");
    return RIVER_EINVAL;
  }
  if ((found = river__module_find(name)) != NULL) {
    if (loading != NULL)
      river__error("plugin %s: module '%s' is already registered (%s%s): "
                   "a plugin's module needs a name of its own", loading,
                   name, found->plugin ? "by plugin " : "built in",
                   found->plugin ? found->plugin : "");
    else
      river__error("module '%s' is already registered", name);
    return RIVER_EEXIST;
  }
  if (!decl_ok(name, decl))
    return RIVER_EINVAL;
  if ((m = calloc(1, sizeof *m)) == NULL)
    return RIVER_ENOMEM;
  snprintf(m->name, sizeof m->name, "%s", name);
  m->fn = fn;
  m->decl = *decl;
  m->user = user;
  m->decl.args = with_stage_args(decl->args);
  m->decl.doc = decl->doc ? strdup(decl->doc) : NULL;
  m->plugin = loading != NULL ? strdup(loading) : NULL;
  rc = !m->decl.args || (decl->doc && !m->decl.doc)
           || (loading != NULL && m->plugin == NULL)
           ? RIVER_ENOMEM : parse_decl_args(m);
  if (rc == RIVER_SUCCESS && nmods == mods_cap) {
    grown = realloc(mods, (size_t)(mods_cap * 2 + 8) * sizeof *mods);
    if (grown == NULL)
      rc = RIVER_ENOMEM;
    else {
      mods = grown;
      mods_cap = mods_cap * 2 + 8;
    }
  }
  if (rc != RIVER_SUCCESS) {
    free_module(m);
    return rc;
  }
  mods[nmods++] = m;
  return RIVER_SUCCESS;
}

const river__module *river__module_find(const char *name)
{
  int i;

  if (!builtins_done) {
    const char *was = loading;   /* built-ins belong to no plugin */
    builtins_done = 1;  /* first: registering looks names up too */
    loading = NULL;
    river__modules_builtin();
    loading = was;
  }
  for (i = 0; name != NULL && i < nmods; i++)
    if (strcmp(mods[i]->name, name) == 0)
      return mods[i];
  return NULL;
}

void river__module_set_plugin(const char *path)
{
  loading = path;
}

void river__module_drop_plugin(const char *path)
{
  int i, k = 0;

  for (i = 0; i < nmods; i++) {
    if (mods[i]->plugin != NULL && strcmp(mods[i]->plugin, path) == 0)
      free_module(mods[i]);
    else
      mods[k++] = mods[i];
  }
  nmods = k;
}

int river_module_count(int *n)
{
  if (n == NULL)
    return RIVER_EINVAL;
  (void)river__module_find(NULL);   /* the built-ins first */
  *n = nmods;
  return RIVER_SUCCESS;
}

int river_module_info_get(int index, river_module_info *info)
{
  const river__module *m;

  (void)river__module_find(NULL);
  if (info == NULL || index < 0 || index >= nmods) {
    river__error("river_module_info_get: %s", info == NULL ? "info is NULL"
                 : "index out of range (river_module_count)");
    return RIVER_EINVAL;
  }
  m = mods[index];
  info->name = m->name;
  info->min_inputs = m->decl.min_inputs;
  info->max_inputs = m->decl.max_inputs;
  info->min_outputs = m->decl.min_outputs;
  info->max_outputs = m->decl.max_outputs;
  info->args = m->decl.args;
  info->doc = m->decl.doc;
  info->plugin = m->plugin;
  return RIVER_SUCCESS;
}

void river__module_clear(void)
{
  int i;

  for (i = 0; i < nmods; i++)
    free_module(mods[i]);
  free(mods);
  mods = NULL;
  nmods = mods_cap = 0;
  builtins_done = 0;
}

int river__arg_index(const river__module *m, const char *name)
{
  int i;

  for (i = 0; name != NULL && i < m->nargs; i++)
    if (strcmp(m->args[i].name, name) == 0)
      return i;
  return -1;
}

/* ---------------------------------------------------------- context */

void river__ctx_init(river_ctx *ctx, river_flow *f, river__stage *s)
{
  memset(ctx, 0, sizeof *ctx);
  ctx->flow = f;
  ctx->stage = s;
  ctx->ninstances = s->nranks;
}

void *river_ctx_user(const river_ctx *ctx)
{
  return ctx != NULL ? ctx->stage->mod->user : NULL;
}

int river_ctx_instance(const river_ctx *ctx, int *instance, int *ninstances)
{
  if (ctx == NULL)
    return RIVER_EINVAL;
  if (instance != NULL)
    *instance = ctx->instance;
  if (ninstances != NULL)
    *ninstances = ctx->ninstances;
  return RIVER_SUCCESS;
}

const char *river_ctx_stage(const river_ctx *ctx)
{
  return ctx != NULL ? ctx->stage->name : NULL;
}

int river_ctx_log(const river_ctx *ctx, int level, const char *fmt, ...)
{
  char msg[900], who[RIVER__NAME_MAX + 32];
  const char *where;
  va_list ap;

  if (ctx == NULL || fmt == NULL)
    return RIVER_EINVAL;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  if (ctx->run != NULL)
    snprintf(who, sizeof who, "stage '%s' instance %d", ctx->stage->name,
             ctx->instance);
  else
    snprintf(who, sizeof who, "stage '%s'", ctx->stage->name);
  where = ctx->stage->origin;
  return where != NULL ? river_log(level, "%s: %s: %s", where, who, msg)
                       : river_log(level, "%s: %s", who, msg);
}

int river_ctx_ports(const river_ctx *ctx, int *ninputs, int *noutputs)
{
  if (ctx == NULL)
    return RIVER_EINVAL;
  if (ninputs != NULL)
    *ninputs = ctx->stage->ninputs;
  if (noutputs != NULL)
    *noutputs = ctx->stage->noutputs;
  return RIVER_SUCCESS;
}

int river_input_schema(const river_ctx *ctx, int input,
                       const river_schema **schema)
{
  const river__edge *e;
  const river__stage *from;

  if (ctx == NULL || schema == NULL || input < 0
      || input >= ctx->stage->ninputs || ctx->stage->in_edge[input] < 0)
    return RIVER_EINVAL;
  e = &ctx->flow->edges[ctx->stage->in_edge[input]];
  from = &ctx->flow->stages[e->from];
  if (from->out_schema == NULL || from->out_schema[e->opts.from_output] == NULL)
    return RIVER_ESTATE;    /* not checked yet */
  *schema = from->out_schema[e->opts.from_output];
  return RIVER_SUCCESS;
}

int river_output_schema(const river_ctx *ctx, int output,
                        const river_schema **schema)
{
  if (ctx == NULL || schema == NULL || output < 0
      || output >= ctx->stage->noutputs)
    return RIVER_EINVAL;
  if (ctx->stage->out_schema == NULL || ctx->stage->out_schema[output] == NULL)
    return RIVER_ESTATE;
  *schema = ctx->stage->out_schema[output];
  return RIVER_SUCCESS;
}

/* -------------------------------------------------------- arguments */

/* The text of argument name of ctx's stage, if its declared type is one
 * of want (a bit mask of 1 << type): given, else the default. */
static int arg_text(const river_ctx *ctx, const char *name, unsigned want,
                    const char *getter, const char **text, int *type)
{
  const river__stage *s;
  int k;

  if (ctx == NULL || name == NULL)
    return RIVER_EINVAL;
  s = ctx->stage;
  if ((k = river__arg_index(s->mod, name)) < 0) {
    river__error("stage '%s': module '%s' has no argument '%s'", s->name,
                 s->mod->name, name);
    return RIVER_EINVAL;
  }
  if (!(want & (1u << s->mod->args[k].type))) {
    river__error("stage '%s': argument '%s' is a %s: %s cannot read it",
                 s->name, name, type_names[s->mod->args[k].type], getter);
    return RIVER_EINVAL;
  }
  *text = s->args[k].value ? s->args[k].value : s->mod->args[k].def;
  *type = s->mod->args[k].type;
  if (*text == NULL) {
    river__error("stage '%s': required argument '%s' was not given",
                 s->name, name);
    return RIVER_EINVAL;
  }
  return RIVER_SUCCESS;
}

/* Convert with the checks of arg_text; values were checked when given. */
static int arg_get(const river_ctx *ctx, const char *name, unsigned want,
                   const char *getter, int64_t *i, uint64_t *u, double *d)
{
  const char *text;
  int type, rc = arg_text(ctx, name, want, getter, &text, &type);

  if (rc == RIVER_SUCCESS
      && (rc = river__arg_parse((river__arg_type)type, text, i, u, d)) != 0)
    river__error("stage '%s': argument '%s': expected %s, got '%s'",
                 ctx->stage->name, name,
                 river__arg_expect((river__arg_type)type), text);
  return rc;
}

int river_arg_str(const river_ctx *ctx, const char *name, const char **value)
{
  const char *text;
  int type, rc;

  if (value == NULL)
    return RIVER_EINVAL;
  rc = arg_text(ctx, name, (1u << RIVER__ARG_STR) | (1u << RIVER__ARG_FIELD),
                "river_arg_str", &text, &type);
  if (rc == RIVER_SUCCESS)
    *value = text;
  return rc;
}

int river_arg_int(const river_ctx *ctx, const char *name, int64_t *value)
{
  int64_t v;
  int rc;

  if (value == NULL)
    return RIVER_EINVAL;
  rc = arg_get(ctx, name, 1u << RIVER__ARG_INT, "river_arg_int", &v, NULL,
               NULL);
  if (rc == RIVER_SUCCESS)
    *value = v;
  return rc;
}

int river_arg_uint(const river_ctx *ctx, const char *name, uint64_t *value)
{
  uint64_t v;
  int rc;

  if (value == NULL)
    return RIVER_EINVAL;
  rc = arg_get(ctx, name, (1u << RIVER__ARG_UINT) | (1u << RIVER__ARG_SIZE),
               "river_arg_uint", NULL, &v, NULL);
  if (rc == RIVER_SUCCESS)
    *value = v;
  return rc;
}

int river_arg_double(const river_ctx *ctx, const char *name, double *value)
{
  double v;
  int rc;

  if (value == NULL)
    return RIVER_EINVAL;
  rc = arg_get(ctx, name, 1u << RIVER__ARG_DOUBLE, "river_arg_double", NULL,
               NULL, &v);
  if (rc == RIVER_SUCCESS)
    *value = v;
  return rc;
}

int river_arg_bool(const river_ctx *ctx, const char *name, int *value)
{
  int64_t v;
  int rc;

  if (value == NULL)
    return RIVER_EINVAL;
  rc = arg_get(ctx, name, 1u << RIVER__ARG_BOOL, "river_arg_bool", &v, NULL,
               NULL);
  if (rc == RIVER_SUCCESS)
    *value = (int)v;
  return rc;
}
