// libFuzzer harness: arbitrary bytes as a GGUF file, through everything a user's file meets before
// the weights: the reader (header, metadata, tensor infos, layout), the configuration, the
// vocabulary and a tokenizer built from it.
//
// r1pi::Error is the expected refusal of a bad file; anything else (a crash, a sanitizer report,
// another exception, a hang past libFuzzer's -timeout) is a finding. Two readings of the same bytes
// must agree: GgufFile::from_header over an exact-size heap copy (so AddressSanitizer sees a read
// one byte past the end) and GgufFile::open over a memfd (the mmap path users take).
#include <sys/mman.h>
#include <unistd.h>

#include <cstdint>
#include <optional>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "common/error.h"
#include "gguf/gguf_file.h"
#include "model/model_config.h"
#include "tokenizer/tokenizer.h"
#include "tokenizer/vocab.h"

namespace {

[[noreturn]] void finding(const char* what) {
  std::fprintf(stderr, "fuzz_gguf: %s\n", what);
  std::abort();
}

// One memfd for the whole run, rewritten for every input; open() sees it as a regular file.
const std::string& memfd_path() {
  static const std::string path = [] {
    const int fd = memfd_create("fuzz_gguf", MFD_CLOEXEC);
    if (fd < 0) finding("memfd_create failed");
    return "/proc/self/fd/" + std::to_string(fd);
  }();
  return path;
}

void write_memfd(const uint8_t* data, size_t size) {
  const int fd = std::stoi(memfd_path().substr(std::string("/proc/self/fd/").size()));
  if (ftruncate(fd, 0) != 0) finding("ftruncate failed");
  for (size_t done = 0; done < size;) {
    const ssize_t n = pwrite(fd, data + done, size - done, off_t(done));
    if (n <= 0) finding("pwrite failed");
    done += size_t(n);
  }
}

void exercise_tokenizer(const r1pi::GgufFile& file) {
  r1pi::Vocab vocab = r1pi::Vocab::from_gguf(file);
  const r1pi::Tokenizer tokenizer(std::move(vocab));
  const int32_t n_vocab = tokenizer.n_vocab();
  static const char* const kTexts[] = {
      "Hello world! 123 ümlaut 日本語", "<|begin_of_text|><think>a</think>", "\xff\xfe\xc3 \xe6\x97",
      "", "   \n\n\t x"};
  for (const char* text : kTexts) {
    for (bool special : {false, true}) {
      std::vector<int32_t> ids;
      try {
        ids = tokenizer.encode(text, tokenizer.bos_id() >= 0, special);
      } catch (const r1pi::Error&) {
        continue;  // e.g. a vocabulary that cannot spell a byte
      }
      for (int32_t id : ids)
        if (id < 0 || id >= n_vocab) finding("encode returned an id outside the vocabulary");
      const std::string text_back = tokenizer.decode(ids);
      r1pi::StreamDecoder stream(tokenizer);
      std::string streamed;
      for (int32_t id : ids) streamed += stream.push(id);
      streamed += stream.flush();
      if (streamed != text_back) finding("StreamDecoder and decode disagree");
    }
  }
  // Every id decodes (the rendered bytes of each token were computed at construction).
  for (int32_t id : {0, n_vocab / 2, n_vocab - 1}) (void)tokenizer.token_bytes(id);
  (void)tokenizer.is_end_of_generation(tokenizer.eos_id());
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  // Exact-size heap copy: no slack after the last byte.
  std::vector<uint8_t> copy(data, data + size);
  std::optional<r1pi::GgufFile> heap_file;
  try {
    heap_file.emplace(r1pi::GgufFile::from_header("fuzz.gguf", copy.data(), copy.size(), copy.size()));
  } catch (const r1pi::Error&) {
  }

  std::optional<r1pi::GgufFile> file;
  write_memfd(data, size);
  try {
    file.emplace(r1pi::GgufFile::open(memfd_path()));
  } catch (const r1pi::Error&) {
  }
  if (file.has_value() != heap_file.has_value()) finding("open() and from_header() disagree on validity");
  if (!file) return 0;
  if (file->metadata().size() != heap_file->metadata().size() ||
      file->tensors().size() != heap_file->tensors().size() ||
      file->data_offset() != heap_file->data_offset())
    finding("open() and from_header() read different files");

  // Every tensor the layout check accepted lies inside the file.
  for (const r1pi::GgufTensorInfo& t : file->tensors()) {
    const uint8_t* p = file->tensor_data(t);
    if (p < file->header_bytes() || uint64_t(p - file->header_bytes()) + t.n_bytes > size)
      finding("a validated tensor lies outside the file");
  }

  try {
    (void)r1pi::ModelConfig::from_gguf(*file);
  } catch (const r1pi::Error&) {
  }
  try {
    exercise_tokenizer(*file);
  } catch (const r1pi::Error&) {
  }
  return 0;
}
