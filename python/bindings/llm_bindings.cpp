// The native side of pteron.llm: start a generation, then one token per next() call with the
// GIL released while the method runs; tokenizers (runtime/llm/tokenizer.h) and their text
// streams.
#include "python/bindings/llm_bindings.h"

#include <nanobind/stl/optional.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/unique_ptr.h>
#include <nanobind/stl/vector.h>

#include <optional>
#include <stdexcept>
#include <vector>

#include "runtime/llm/generator.h"
#include "runtime/llm/tokenizer.h"

namespace nb = nanobind;

namespace pteron::py {
namespace {

[[noreturn]] void raise(Error e) {
  throw std::runtime_error(last_error_message()[0] ? last_error_message() : error_name(e));
}

class PyGenerator {
 public:
  PyGenerator(std::shared_ptr<HostProgram> program, std::unique_ptr<HostMethod> method,
              llm::Generator generator)
      : program_(std::move(program)),
        method_(std::move(method)),
        generator_(std::move(generator)) {}

  void start(const std::vector<int64_t>& prompt, int64_t max_new_tokens, float temperature,
             int32_t top_k, float top_p, uint64_t seed, const std::vector<int64_t>& eos_ids) {
    llm::GenerationConfig config;
    config.max_new_tokens = max_new_tokens;
    config.sampler = {temperature, top_k, top_p, seed};
    config.eos_ids = eos_ids;
    Error e;
    {
      nb::gil_scoped_release release;
      e = generator_->start(Span<const int64_t>(prompt.data(), prompt.size()), config);
    }
    if (e != Error::Ok) raise(e);
  }

  // The next token, or None once the generation is over.
  nb::object next() {
    if (generator_->done()) return nb::none();
    std::optional<Result<int64_t>> token;
    {
      nb::gil_scoped_release release;
      token.emplace(generator_->next());
    }
    if (!token->ok()) raise(token->error());
    return nb::int_(token->get());
  }

  bool done() const { return generator_->done(); }

  nb::dict figures() const {
    const llm::GenerationFigures f = generator_->figures();
    nb::dict d;
    d["prompt_tokens"] = f.prompt_tokens;
    d["generated_tokens"] = f.generated_tokens;
    d["prefill_calls"] = f.prefill_calls;
    d["stop_reason"] = llm::stop_reason_name(f.stop);
    d["prefill_ms"] = f.prefill_ms;
    d["time_to_first_token_ms"] = f.time_to_first_token_ms;
    d["decode_ms"] = f.decode_ms;
    d["prefill_tokens_per_s"] = f.prefill_tokens_per_s;
    d["decode_tokens_per_s"] = f.decode_tokens_per_s;
    d["peak_rss_bytes"] = f.peak_rss_bytes;
    return d;
  }

  int64_t max_seq_len() const { return generator_->max_seq_len(); }
  int32_t max_tokens_per_call() const { return generator_->max_tokens_per_call(); }
  int64_t vocab_size() const { return generator_->vocab_size(); }
  std::optional<int64_t> program_bos_id() const {
    const int64_t bos = generator_->program_bos_id();
    return bos >= 0 ? std::optional<int64_t>(bos) : std::nullopt;
  }
  std::optional<std::vector<int64_t>> program_eos_ids() const {
    if (!generator_->has_program_eos_ids()) return std::nullopt;
    return generator_->program_eos_ids();
  }

 private:
  std::shared_ptr<HostProgram> program_;
  std::unique_ptr<HostMethod> method_;  // the generator runs this method
  std::optional<llm::Generator> generator_;
};

// A loaded tokenizer; shared with the text streams made from it.
class PyTokenizer {
 public:
  explicit PyTokenizer(const std::string& path) {
    auto loaded = llm::load_tokenizer(path);
    if (!loaded.ok()) throw std::invalid_argument(last_error_message());
    tokenizer_ = std::move(loaded.get());
    path_ = path;
  }

  std::vector<int64_t> encode(const std::string& text, bool add_bos) const {
    std::vector<int64_t> ids;
    if (llm::encode_prompt(*tokenizer_, text, add_bos, ids) != Error::Ok) {
      throw std::invalid_argument(last_error_message());
    }
    return ids;
  }
  std::string decode(const std::vector<int64_t>& ids, bool skip_special) const {
    return tokenizer_->decode_sequence(Span<const int64_t>(ids.data(), ids.size()), skip_special);
  }
  nb::bytes token_bytes(int64_t id) const {
    const std::string b = tokenizer_->decode(id);
    return nb::bytes(b.data(), b.size());
  }
  bool is_special(int64_t id) const { return tokenizer_->is_special(id); }
  void check_fits(int64_t logits) const {
    if (llm::check_vocab_fits(*tokenizer_, logits, path_) != Error::Ok) {
      throw std::invalid_argument(last_error_message());
    }
  }
  nb::object bos_id() const {
    if (tokenizer_->bos_id() < 0) return nb::none();
    return nb::int_(tokenizer_->bos_id());
  }
  std::vector<int64_t> eos_ids() const { return tokenizer_->eos_ids(); }
  int64_t vocab_size() const { return tokenizer_->vocab_size(); }
  std::string format() const { return tokenizer_->format(); }
  const llm::Tokenizer& get() const { return *tokenizer_; }

 private:
  std::unique_ptr<llm::Tokenizer> tokenizer_;
  std::string path_;
};

class PyTextStream {
 public:
  explicit PyTextStream(const PyTokenizer& tokenizer) : stream_(tokenizer.get()) {}
  std::string push(int64_t id) { return stream_.push(id); }
  std::string finish() { return stream_.finish(); }

 private:
  llm::TextStream stream_;
};

}  // namespace

nb::object make_generator(std::shared_ptr<HostProgram> program, const std::string& name) {
  auto metadata = llm::read_llm_metadata(program->program());
  if (!metadata.ok()) raise(metadata.error());
  auto method = HostMethod::load(*program, name.c_str());
  if (!method.ok()) raise(method.error());
  auto generator = llm::Generator::create(method.get()->method(), metadata.get());
  if (!generator.ok()) raise(generator.error());
  return nb::cast(std::make_unique<PyGenerator>(std::move(program), std::move(method.get()),
                                                std::move(generator.get())));
}

void bind_llm(nb::module_& m) {
  nb::class_<PyGenerator>(m, "Generator")
      .def("start", &PyGenerator::start, nb::arg("prompt"), nb::arg("max_new_tokens"),
           nb::arg("temperature"), nb::arg("top_k"), nb::arg("top_p"), nb::arg("seed"),
           nb::arg("eos_ids"))
      .def("next", &PyGenerator::next)
      .def_prop_ro("done", &PyGenerator::done)
      .def("figures", &PyGenerator::figures)
      .def_prop_ro("max_seq_len", &PyGenerator::max_seq_len)
      .def_prop_ro("max_tokens_per_call", &PyGenerator::max_tokens_per_call)
      .def_prop_ro("vocab_size", &PyGenerator::vocab_size)
      .def_prop_ro("program_eos_ids", &PyGenerator::program_eos_ids)
      .def_prop_ro("program_bos_id", &PyGenerator::program_bos_id);

  nb::class_<PyTokenizer>(m, "Tokenizer")
      .def(nb::init<const std::string&>(), nb::arg("path"))
      .def("encode", &PyTokenizer::encode, nb::arg("text"), nb::arg("add_bos") = false)
      .def("decode", &PyTokenizer::decode, nb::arg("ids"), nb::arg("skip_special_tokens") = false)
      .def("token_bytes", &PyTokenizer::token_bytes, nb::arg("id"))
      .def("is_special", &PyTokenizer::is_special, nb::arg("id"))
      .def("check_fits", &PyTokenizer::check_fits, nb::arg("logits"))
      .def_prop_ro("bos_id", &PyTokenizer::bos_id)
      .def_prop_ro("eos_ids", &PyTokenizer::eos_ids)
      .def_prop_ro("vocab_size", &PyTokenizer::vocab_size)
      .def_prop_ro("format", &PyTokenizer::format);
  // The stream keeps its tokenizer alive (it holds a reference to the native one).
  nb::class_<PyTextStream>(m, "TextStream")
      .def(nb::init<const PyTokenizer&>(), nb::arg("tokenizer"), nb::keep_alive<1, 2>())
      .def("push", &PyTextStream::push, nb::arg("id"))
      .def("finish", &PyTextStream::finish);
}

}  // namespace pteron::py
