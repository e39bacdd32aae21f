// Parses and checks the tensor infos of a GGUF file.
#pragma once
#include <cstdint>
#include <vector>

#include "gguf/gguf_byte_reader.h"
#include "gguf/gguf_file.h"

namespace r1pi {

// Reads `count` tensor infos at the reader's position and checks each on its own: 1..4 non-zero
// dimensions, element and byte counts without overflow, a supported type, rows a whole number
// of blocks, an offset on the alignment, a name no earlier tensor has.
std::vector<GgufTensorInfo> read_gguf_tensor_infos(GgufByteReader& reader, uint64_t count,
                                                   uint64_t alignment);

// Checks the tensors together: each inside the data section (which starts at data_offset and
// runs to the end of the file) and no two sharing a byte. Errors go through reader.fail().
void check_gguf_tensor_layout(const std::vector<GgufTensorInfo>& tensors, uint64_t data_offset,
                              uint64_t file_size, GgufByteReader& reader);

}  // namespace r1pi
