// The peer side of `make bench-cortex-m-peer`: one MLPerf Tiny reference model (.tflite, built in
// as `peer_model` by the generated assembly file) run once by TensorFlow Lite Micro with the
// CMSIS-NN kernels, between the same instruction-count markers and on the same board support
// (firmware/platform/cortex_m) as pteron's firmware, so tools/qemu_icount counts Invoke() alone.
// The input is filled with a fixed pseudo-random pattern (int8) or small values (float); nothing
// is compared: the reference models' weights are not pteron's zoo models'. Reports one line:
//   tflm: ok arena_used=<bytes> static_ram=<bytes> stack=<bytes> heap=<bytes>
// with static_ram the .data/.bss of the image less the arena buffer. Built by
// bench/cortex_m_peer.py against TFLM's libtensorflow-microlite.a (its own Makefile).
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include <new>

#include "board.h"
#include "semihosting.h"
#include "tensorflow/lite/micro/micro_interpreter.h"
#include "tensorflow/lite/micro/micro_mutable_op_resolver.h"
#include "tensorflow/lite/schema/schema_generated.h"

#ifndef PEER_ARENA_BYTES
#define PEER_ARENA_BYTES (256 * 1024)
#endif

extern "C" const unsigned char peer_model[];
extern "C" void* _sbrk(ptrdiff_t increment);
extern "C" char end[];

namespace {

alignas(16) uint8_t g_arena[PEER_ARENA_BYTES];
char g_line[160];

int fail(const char* what) {
  snprintf(g_line, sizeof(g_line), "tflm: error %s\n", what);
  sh_write0(g_line);
  return 1;
}

void fill_input(TfLiteTensor* t) {
  uint32_t seed = 12345;
  if (t->type == kTfLiteFloat32) {
    for (size_t i = 0; i < t->bytes / 4; ++i) {
      seed = seed * 1664525u + 1013904223u;
      t->data.f[i] = static_cast<float>(static_cast<int32_t>(seed >> 24) - 128) / 64.0f;
    }
    return;
  }
  for (size_t i = 0; i < t->bytes; ++i) {
    seed = seed * 1664525u + 1013904223u;
    t->data.uint8[i] = static_cast<uint8_t>(seed >> 24);
  }
}

}  // namespace

// As pteron's firmware: output goes over semihosting directly (sh_write0), so newlib's stdio is
// not set up (firmware/platform/cortex_m/board.h) and its heap is not counted against TFLM.
extern "C" void board_stdio_init(void) {}

int main() {
  const tflite::Model* model = tflite::GetModel(peer_model);
  // Every operator the four MLPerf Tiny reference models use, and the few a variant may add.
  // Constructed in static storage, never destroyed: no exit-time destructor to register (the
  // image has no C runtime start files).
  using Resolver = tflite::MicroMutableOpResolver<14>;
  alignas(Resolver) static uint8_t resolver_storage[sizeof(Resolver)];
  Resolver& ops = *new (resolver_storage) Resolver();
  ops.AddConv2D();
  ops.AddDepthwiseConv2D();
  ops.AddFullyConnected();
  ops.AddAveragePool2D();
  ops.AddMaxPool2D();
  ops.AddSoftmax();
  ops.AddReshape();
  ops.AddAdd();
  ops.AddQuantize();
  ops.AddDequantize();
  ops.AddMean();
  ops.AddPad();
  ops.AddRelu();
  ops.AddLogistic();
  alignas(tflite::MicroInterpreter) static uint8_t
      interpreter_storage[sizeof(tflite::MicroInterpreter)];
  tflite::MicroInterpreter& interpreter =
      *new (interpreter_storage) tflite::MicroInterpreter(model, ops, g_arena, sizeof(g_arena));
  if (interpreter.AllocateTensors() != kTfLiteOk) return fail("AllocateTensors");
  for (size_t i = 0; i < interpreter.inputs_size(); ++i) fill_input(interpreter.input(i));
  board_icount_begin();
  const TfLiteStatus status = interpreter.Invoke();
  board_icount_end();
  if (status != kTfLiteOk) return fail("Invoke");
  const unsigned long heap = static_cast<unsigned long>(static_cast<char*>(_sbrk(0)) - end);
  snprintf(g_line, sizeof(g_line), "tflm: ok arena_used=%lu static_ram=%lu stack=%lu heap=%lu\n",
           static_cast<unsigned long>(interpreter.arena_used_bytes()),
           static_cast<unsigned long>(board_static_ram_bytes() - sizeof(g_arena)),
           static_cast<unsigned long>(board_stack_high_water()), heap);
  sh_write0(g_line);
  return 0;
}
