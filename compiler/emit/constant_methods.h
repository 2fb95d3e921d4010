// Constant methods: ExecuTorch's constant_methods (to_edge(...,
// constant_methods={"get_max_seq_len": 128})), methods with no inputs and no instructions whose
// outputs are constants. LLM runners read their metadata from them (runtime/llm/metadata.h). The
// emitter writes them as ExecuTorch's _emit_prim_getters does: one plan each, the values as its
// outputs, one empty chain, no operators, non_const_buffer_sizes [0], the value's pytree spec ("$"
// for a scalar, "L2#1#1($,$)" for a list of two) as container_meta_type.encoded_out_str.
#pragma once

#include <cstdint>
#include <string>
#include <variant>
#include <vector>

#include "compiler/ir/graph.h"

namespace pteron::compiler {

using ConstantScalar = std::variant<int64_t, bool, double, std::string>;

struct ConstantMethod {
  std::string name;
  std::vector<ConstantScalar> values;
  bool list = false;     // a list (one output per item, possibly none); else exactly one value
  bool derived = false;  // written by derive_llm_metadata, not given by the user
};

// Throws CompileError naming the method for: an empty, repeated or (for `program_methods`)
// taken name; a scalar without exactly one value; and, for the LLM metadata methods, what the
// runtime's reader refuses (lengths: one int > 0; ids: ints >= 0, get_eos_ids one or a list;
// flags: a bool or 0/1).
void check_constant_methods(const std::vector<ConstantMethod>& methods,
                            const std::vector<std::string>& program_methods);

// The LLM metadata a stateful decoder's graph implies, as transformers'
// convert_and_export_with_cache exports it: its KV caches are rank-4 state buffers
// [batch, heads, cache length, head dim], so get_max_context_len is their dim 2 (when they all
// agree), get_max_seq_len the most tokens one call takes (dim 1 of input_ids [1, T], at most
// the cache length), use_kv_cache true and use_sdpa_with_kv_cache false (that layout is not
// ExecuTorch's custom op's); get_vocab_size is the last dim of a rank-3 float first output
// (the logits); enable_dynamic_shape says whether an input has a dynamic size (ExecuTorch's
// runner then prefills a prompt in one call, not token by token); get_n_layers, get_n_kv_heads
// and get_head_dim from the caches' shape. Token ids (get_bos_id, get_eos_ids) are not in the
// graph: they come from the .pt2's extra/constant_methods.json or the caller.
// Empty for a graph without such caches.
std::vector<ConstantMethod> derive_llm_metadata(const ir::Graph& graph);

// The constant methods a JSON object {name: value or list of values} states (what
// `python -m pteron.zoo export` writes into a .pt2 as extra/constant_methods.json: the model
// config's get_bos_id and get_eos_ids). Throws CompileError naming `where` and the method for
// text that is no such object.
std::vector<ConstantMethod> constant_methods_from_json(const std::string& text,
                                                       const std::string& where);

// `derived` then `given`; a given method replaces a derived one of the same name.
std::vector<ConstantMethod> merge_constant_methods(std::vector<ConstantMethod> derived,
                                                   const std::vector<ConstantMethod>& given);

// NAME=VALUE, the CLI's --constant-method: VALUE is an int, true or false, a float, a
// "quoted string", or a list [a,b,...] of those. Throws CompileError saying what is wrong.
ConstantMethod parse_constant_method(const std::string& text);

// "get_max_seq_len=128", "get_eos_ids=[2, 3]", "use_kv_cache=true".
std::string describe_constant_method(const ConstantMethod& m);

// The pytree spec ExecuTorch writes for the method's value.
std::string constant_method_spec(const ConstantMethod& m);

}  // namespace pteron::compiler
