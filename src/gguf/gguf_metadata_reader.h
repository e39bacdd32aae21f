// Parses the metadata section of a GGUF file into values, validating as it goes.
#pragma once
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "gguf/gguf_byte_reader.h"
#include "gguf/gguf_value.h"

namespace r1pi {

// Reads `count` key/value pairs at the reader's position. Refuses counts and lengths the bytes
// left cannot hold, unknown value types, booleans other than 0/1, duplicate keys, arrays nested
// absurdly deep and metadata with absurdly many values.
std::vector<std::pair<std::string, GgufValue>> read_gguf_metadata(GgufByteReader& reader,
                                                                  uint64_t count);

}  // namespace r1pi
