// QEMU TCG plugin: counts the guest instructions executed between two marker addresses,
// exactly and repeatably. The firmware calls board_icount_begin() before an inference and
// board_icount_end() after it; `pteron firmware --run` passes their addresses:
//   qemu-system-arm ... -plugin libqemu_icount.so,begin=0xADDR,end=0xADDR -d plugin
// At exit it prints "icount: inference=N total=M marks=K" (N from the last begin/end pair).
//
// Debian ships no qemu-plugin.h, so the few API declarations used are written out below
// (QEMU 7.2, plugin API version 1; the binary exports these symbols).
#include <inttypes.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef uint64_t qemu_plugin_id_t;
typedef struct qemu_info_t qemu_info_t;
struct qemu_plugin_tb;
enum qemu_plugin_cb_flags { QEMU_PLUGIN_CB_NO_REGS, QEMU_PLUGIN_CB_R_REGS, QEMU_PLUGIN_CB_RW_REGS };
enum qemu_plugin_op { QEMU_PLUGIN_INLINE_ADD_U64 };
typedef void (*qemu_plugin_vcpu_udata_cb_t)(unsigned int vcpu_index, void* userdata);
typedef void (*qemu_plugin_vcpu_tb_trans_cb_t)(qemu_plugin_id_t id, struct qemu_plugin_tb* tb);
typedef void (*qemu_plugin_udata_cb_t)(qemu_plugin_id_t id, void* userdata);

void qemu_plugin_register_vcpu_tb_trans_cb(qemu_plugin_id_t id, qemu_plugin_vcpu_tb_trans_cb_t cb);
size_t qemu_plugin_tb_n_insns(const struct qemu_plugin_tb* tb);
uint64_t qemu_plugin_tb_vaddr(const struct qemu_plugin_tb* tb);
void qemu_plugin_register_vcpu_tb_exec_cb(struct qemu_plugin_tb* tb, qemu_plugin_vcpu_udata_cb_t cb,
                                          enum qemu_plugin_cb_flags flags, void* userdata);
void qemu_plugin_register_vcpu_tb_exec_inline(struct qemu_plugin_tb* tb, enum qemu_plugin_op op,
                                              void* ptr, uint64_t imm);
void qemu_plugin_register_atexit_cb(qemu_plugin_id_t id, qemu_plugin_udata_cb_t cb, void* userdata);
void qemu_plugin_outs(const char* string);

__attribute__((visibility("default"))) int qemu_plugin_version = 1;

// One vCPU (Cortex-M55), so plain counters suffice. Each translation block adds its
// instruction count when it starts executing; inside an inference no block is cut short (no
// exceptions are taken), so differences between marker blocks are exact.
static uint64_t g_total;
static uint64_t g_begin_addr, g_end_addr;
static uint64_t g_at_begin;
static uint64_t g_inference;
static uint64_t g_marks;
static bool g_open;

static void on_begin(unsigned int vcpu, void* data) {
  (void)vcpu;
  (void)data;
  g_at_begin = g_total;
  g_open = true;
}

static void on_end(unsigned int vcpu, void* data) {
  (void)vcpu;
  (void)data;
  if (!g_open) return;
  g_inference = g_total - g_at_begin;
  g_open = false;
  ++g_marks;
}

static void on_translate(qemu_plugin_id_t id, struct qemu_plugin_tb* tb) {
  (void)id;
  qemu_plugin_register_vcpu_tb_exec_inline(tb, QEMU_PLUGIN_INLINE_ADD_U64, &g_total,
                                           qemu_plugin_tb_n_insns(tb));
  const uint64_t pc = qemu_plugin_tb_vaddr(tb);
  if (pc == g_begin_addr)
    qemu_plugin_register_vcpu_tb_exec_cb(tb, on_begin, QEMU_PLUGIN_CB_NO_REGS, NULL);
  if (pc == g_end_addr)
    qemu_plugin_register_vcpu_tb_exec_cb(tb, on_end, QEMU_PLUGIN_CB_NO_REGS, NULL);
}

static void on_plugin_exit(qemu_plugin_id_t id, void* data) {
  (void)id;
  (void)data;
  char line[160];
  snprintf(line, sizeof(line),
           "icount: inference=%" PRIu64 " total=%" PRIu64 " marks=%" PRIu64 "\n", g_inference,
           g_total, g_marks);
  qemu_plugin_outs(line);
}

__attribute__((visibility("default"))) int qemu_plugin_install(qemu_plugin_id_t id,
                                                               const qemu_info_t* info, int argc,
                                                               char** argv) {
  (void)info;
  for (int i = 0; i < argc; ++i) {
    // Thumb symbol addresses carry bit 0; translation blocks start at the even address.
    if (strncmp(argv[i], "begin=", 6) == 0)
      g_begin_addr = strtoull(argv[i] + 6, NULL, 0) & ~1ull;
    else if (strncmp(argv[i], "end=", 4) == 0)
      g_end_addr = strtoull(argv[i] + 4, NULL, 0) & ~1ull;
    else {
      fprintf(stderr, "qemu_icount: unknown argument '%s' (expected begin=ADDR,end=ADDR)\n",
              argv[i]);
      return -1;
    }
  }
  qemu_plugin_register_vcpu_tb_trans_cb(id, on_translate);
  qemu_plugin_register_atexit_cb(id, on_plugin_exit, NULL);
  return 0;
}
