/* bundle.c - triage of a finding's bundle (the folder tr_check --save
 * writes: module.hlo and inN.npy) as one call: load it, isolate, reduce
 * and write the triage bundle into BUNDLE/triage. A fuzz campaign runs it
 * in a child process for each new finding (src/fuzz/campaign.c), so the
 * campaign goes on while a finding is triaged. */
#include "triage.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

tr_status tr_triage_load_bundle(const char *dir, tr_module **m, tr_tensor ***ins, int *nins, tr_diag *d) {
  *m = NULL;
  *ins = NULL;
  *nins = 0;
  char p[4200];
  snprintf(p, sizeof p, "%s/module.hlo", dir);
  tr_module *x = tr_parse_file(p, NULL, d);
  if (!x) return TR_ERR_INVALID;
  if (tr_verify(x, d) != TR_OK) {
    tr_module_free(x);
    return TR_ERR_INVALID;
  }
  const tr_shape *lv[256];
  int nl = 0;
  for (int i = 0; i < x->entry->nparams && nl < 256; i++)
    nl += tr_shape_leaves(x->entry->params[i]->shape, lv + nl, 256 - nl);
  tr_tensor **v = tr_xcalloc((size_t)nl + 1, sizeof *v);
  for (int i = 0; i < nl; i++) {
    snprintf(p, sizeof p, "%s/in%d.npy", dir, i);
    if (access(p, R_OK) != 0) {
      tr_diag_errorf(d, "%s: the module takes %d inputs; in%d.npy is missing", dir, nl, i);
      tr_inputs_free(v, nl);
      tr_module_free(x);
      return TR_ERR_INVALID;
    }
    if (tr_npy_read(p, lv[i]->dtype, &v[i], d) != TR_OK) {
      tr_inputs_free(v, nl);
      tr_module_free(x);
      return TR_ERR_INVALID;
    }
  }
  *m = x;
  *ins = v;
  *nins = nl;
  return TR_OK;
}

tr_status tr_triage_bundle(const char *dir, const char *target, const tr_target_config *tc,
                           const tr_profile *profile, tr_diag *d) {
  tr_module *m = NULL;
  tr_tensor **ins = NULL;
  int nins = 0;
  tr_status st = tr_triage_load_bundle(dir, &m, &ins, &nins, d);
  if (st != TR_OK) return st;
  tr_target *t = NULL;
  st = tr_target_open(target, tc, &t, d);
  if (st == TR_OK) {
    tr_triage_opts o;
    tr_triage_opts_init(&o);
    o.label = dir;
    o.inputs = ins;
    o.ninputs = nins;
    o.profile = profile;
    tr_triage_report r;
    st = tr_isolate(t, m, &o, &r, d);
    if (st == TR_OK && r.outputs.state == TR_LEVEL_FOUND) st = tr_reduce(t, m, &o, &r, d);
    char out[4200];
    snprintf(out, sizeof out, "%s/triage", dir);
    if (st == TR_OK && r.outputs.state == TR_LEVEL_FOUND) st = tr_triage_write(out, &r, d);
    else if (st == TR_OK) {
      tr_diag_errorf(d, "%s: the finding does not show on its inputs", dir);
      st = TR_ERR_INVALID;
    }
    tr_triage_report_free(&r);
    tr_target_close(t);
  }
  tr_inputs_free(ins, nins);
  tr_module_free(m);
  return st;
}
