// The server's status documents: GET /props and /slots in llama-server's shapes, and the lines
// /metrics adds for the slots and the engine's batches.
#pragma once
#include <string>

#include <nlohmann/json.hpp>

#include "server/http_api.h"

namespace r1pi {

nlohmann::json props_json(const ApiContext& c);
nlohmann::json slots_json(const ApiContext& c);
std::string slot_metrics(const ApiContext& c);

}  // namespace r1pi
