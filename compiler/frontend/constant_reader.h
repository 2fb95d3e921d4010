// Weights and other constants of a .pt2: located through the payload configs, mapped in place.
#pragma once

#include <string>
#include <unordered_map>

#include "compiler/frontend/export_json.h"
#include "compiler/frontend/pt2_archive.h"
#include "compiler/ir/value.h"

namespace pteron::compiler::frontend {

// data/weights/<model>_weights_config.json and data/constants/<model>_constants_config.json:
// FQN -> payload (file, pickled?, tensor meta).
class PayloadConfigs {
 public:
  PayloadConfigs(const Pt2Archive& archive, const std::string& model_name);

  struct Payload {
    std::string entry;   // archive entry holding the storage bytes ("data/weights/weight_0")
    std::string config;  // config entry that described it, for messages
    const Json* meta = nullptr;
    bool use_pickle = false;
  };
  // Throws naming `fqn` and both config entries when it is in neither.
  Payload find(const std::string& fqn) const;

 private:
  void load(const Pt2Archive& archive, const std::string& config, const std::string& dir);

  std::unordered_map<std::string, Payload> payloads_;
  std::vector<Json> documents_;
  std::string configs_;  // names of the config entries, for messages
};

struct ConstantTensor {
  ir::TensorSpec spec;
  ir::ConstantData data;
};

// Rebuilds constant `fqn` from its storage bytes: in place when its strides describe a dense
// layout (any dim order) and the bytes are aligned, otherwise copied into a contiguous buffer.
// Several constants may share one storage entry (tied or sliced weights).
ConstantTensor read_constant(const Pt2Archive& archive, const PayloadConfigs& configs,
                             const std::string& fqn, ir::ConstantKind kind);

}  // namespace pteron::compiler::frontend
