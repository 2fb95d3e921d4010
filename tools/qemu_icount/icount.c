// QEMU TCG plugin: counts the guest instructions executed between two marker functions,
// exactly and repeatably. The firmware calls board_icount_begin() before an inference and
// board_icount_end() after it; `pteron firmware --run` passes their addresses:
//   qemu-system-arm ... -plugin libqemu_icount.so,begin=0xADDR,end=0xADDR -d plugin
// A Linux program under qemu-user (pteron-run, bench/arm_icount.py) is position independent, so
// there the markers are named instead (QEMU looks them up in the program's symbol table):
//   qemu-aarch64 -plugin libqemu_icount.so,begin_symbol=NAME,end_symbol=NAME -d plugin prog ...
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
struct qemu_plugin_insn;
struct qemu_plugin_insn* qemu_plugin_tb_get_insn(const struct qemu_plugin_tb* tb, size_t idx);
const char* qemu_plugin_insn_symbol(const struct qemu_plugin_insn* insn);

__attribute__((visibility("default"))) int qemu_plugin_version = 1;

// One vCPU (the Cortex-M55; one thread under qemu-user), so plain counters suffice. Each
// translation block adds its instruction count when it starts executing; inside an inference no block is cut short (no
// exceptions are taken), so differences between marker blocks are exact.
static uint64_t g_total;
static uint64_t g_begin_addr, g_end_addr;
static const char* g_begin_symbol;
static const char* g_end_symbol;
static uint64_t g_at_begin;
static uint64_t g_inference;
static uint64_t g_marks;
static bool g_open;

// by_symbol=N: also print the N functions that executed the most instructions in the last
// begin/end pair (where an inference spends them). A translated block is charged to the function
// of its first instruction; blocks of libraries QEMU has no symbols for (qemu-user loads only the
// program's) are charged to "(no symbol)".
typedef struct {
  const char* symbol;
  uint64_t insns;
  uint64_t in_region;  // instructions executed between the last begin and end
} BlockCount;
static unsigned g_by_symbol;
static BlockCount** g_blocks;
static size_t g_num_blocks, g_cap_blocks;

static void on_begin(unsigned int vcpu, void* data) {
  (void)vcpu;
  (void)data;
  g_at_begin = g_total;
  g_open = true;
  for (size_t i = 0; i < g_num_blocks; ++i) g_blocks[i]->in_region = 0;
}

static void on_block(unsigned int vcpu, void* data) {
  (void)vcpu;
  BlockCount* block = data;
  if (g_open) block->in_region += block->insns;
}

static void count_by_symbol(struct qemu_plugin_tb* tb) {
  BlockCount* block = calloc(1, sizeof(BlockCount));
  if (!block) return;
  block->symbol = qemu_plugin_insn_symbol(qemu_plugin_tb_get_insn(tb, 0));
  block->insns = qemu_plugin_tb_n_insns(tb);
  if (g_num_blocks == g_cap_blocks) {
    size_t cap = g_cap_blocks ? 2 * g_cap_blocks : 4096;
    BlockCount** grown = realloc(g_blocks, cap * sizeof(BlockCount*));
    if (!grown) return free(block);
    g_blocks = grown;
    g_cap_blocks = cap;
  }
  g_blocks[g_num_blocks++] = block;
  qemu_plugin_register_vcpu_tb_exec_cb(tb, on_block, QEMU_PLUGIN_CB_NO_REGS, block);
}

static int by_name(const void* a, const void* b) {
  const char* x = (*(BlockCount* const*)a)->symbol;
  const char* y = (*(BlockCount* const*)b)->symbol;
  return strcmp(x ? x : "", y ? y : "");
}

static int by_count_descending(const void* a, const void* b) {
  const uint64_t x = (*(BlockCount* const*)a)->in_region, y = (*(BlockCount* const*)b)->in_region;
  return x < y ? 1 : x > y ? -1 : 0;
}

// Folds the blocks of each function into its first block, then prints the largest.
static void print_by_symbol(void) {
  qsort(g_blocks, g_num_blocks, sizeof(BlockCount*), by_name);
  size_t n = 0;
  for (size_t i = 0; i < g_num_blocks; ++i) {
    if (n > 0 && by_name(&g_blocks[n - 1], &g_blocks[i]) == 0)
      g_blocks[n - 1]->in_region += g_blocks[i]->in_region;
    else
      g_blocks[n++] = g_blocks[i];
  }
  qsort(g_blocks, n, sizeof(BlockCount*), by_count_descending);
  char line[512];
  for (size_t i = 0; i < n && i < g_by_symbol && g_blocks[i]->in_region > 0; ++i) {
    snprintf(line, sizeof(line), "icount-symbol: %" PRIu64 " %s\n", g_blocks[i]->in_region,
             g_blocks[i]->symbol ? g_blocks[i]->symbol : "(no symbol)");
    qemu_plugin_outs(line);
  }
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
  bool begin = pc == g_begin_addr, end = pc == g_end_addr;
  if (g_begin_symbol) {
    // The marker functions are a few instructions without branches: any block whose first
    // instruction lies in one is its entry.
    const char* symbol = qemu_plugin_insn_symbol(qemu_plugin_tb_get_insn(tb, 0));
    begin = symbol && strcmp(symbol, g_begin_symbol) == 0;
    end = symbol && strcmp(symbol, g_end_symbol) == 0;
  }
  if (g_by_symbol) count_by_symbol(tb);
  if (begin) qemu_plugin_register_vcpu_tb_exec_cb(tb, on_begin, QEMU_PLUGIN_CB_NO_REGS, NULL);
  if (end) qemu_plugin_register_vcpu_tb_exec_cb(tb, on_end, QEMU_PLUGIN_CB_NO_REGS, NULL);
}

static void on_plugin_exit(qemu_plugin_id_t id, void* data) {
  (void)id;
  (void)data;
  char line[160];
  snprintf(line, sizeof(line),
           "icount: inference=%" PRIu64 " total=%" PRIu64 " marks=%" PRIu64 "\n", g_inference,
           g_total, g_marks);
  qemu_plugin_outs(line);
  if (g_by_symbol) print_by_symbol();
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
    else if (strncmp(argv[i], "by_symbol=", 10) == 0)
      g_by_symbol = (unsigned)strtoul(argv[i] + 10, NULL, 0);
    else if (strncmp(argv[i], "begin_symbol=", 13) == 0)
      g_begin_symbol = strdup(argv[i] + 13);  // QEMU frees argv after install
    else if (strncmp(argv[i], "end_symbol=", 11) == 0)
      g_end_symbol = strdup(argv[i] + 11);
    else {
      fprintf(stderr,
              "qemu_icount: unknown argument '%s' (expected begin=ADDR,end=ADDR or "
              "begin_symbol=NAME,end_symbol=NAME, and by_symbol=N)\n",
              argv[i]);
      return -1;
    }
  }
  if (!g_begin_symbol != !g_end_symbol) {
    fprintf(stderr, "qemu_icount: begin_symbol and end_symbol go together\n");
    return -1;
  }
  qemu_plugin_register_vcpu_tb_trans_cb(id, on_translate);
  qemu_plugin_register_atexit_cb(id, on_plugin_exit, NULL);
  return 0;
}
