// One file of a Hugging Face repository onto disk for r1pi-model pull: written to DEST.part and
// continued from there (a "Range: bytes=N-" request) after an interrupted transfer, in this run
// or a later one; hashed while written (the part already on disk first) and checked against the
// listing's SHA-256; renamed to DEST only when whole and verified.
#pragma once
#include <filesystem>
#include <string>

#include "tools/hub/hub_choice.h"
#include "tools/hub/hub_client.h"

namespace r1pi {

// Downloads file (its listing entry) from url_path (below the endpoint: /REPO/resolve/main/FILE)
// to dest. A dest already there with the listing's size and hash is left as it is; one that
// differs is an error (nothing of the user's is overwritten). A hash mismatch removes the part
// file. progress: the progress line on a terminal (tools/progress.h). Throws r1pi::Error.
void download_hub_file(const HubClient& hub, const std::string& url_path, const HubFile& file,
                       const std::filesystem::path& dest, bool progress);

}  // namespace r1pi
