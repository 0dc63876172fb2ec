// pgoutput messages (daemon/changes): arbitrary bytes, cut into messages,
// go through the parser and the change decoder. Nothing may crash, read out
// of bounds (ASan), overflow (UBSan), allocate for a length the bytes cannot
// hold (-rss_limit_mb), or throw anything but PgoutputError.
//
// Input: frames of a 2-byte big-endian length and that many bytes, each one
// message (the last frame takes what is left when it claims more). The seeds
// in corpus/pgoutput/ are the captures of tests/unit/data/pgoutput/ framed
// so (made by its make_fuzz_seeds.py).
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <map>
#include <string>
#include <string_view>

#include "changes/change_decoder.h"
#include "changes/pgoutput_error.h"
#include "changes/pgoutput_parser.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using seatwatch::changes::ChangeDecoder;
  using seatwatch::changes::PgoutputError;
  std::string_view input(reinterpret_cast<const char*>(data), size);
  ChangeDecoder decoder({{"seats", "event_id"}, {"public.tickets", "event_id"},
                         {"payments", "event_id"}, {"t", "k"}});
  std::uint64_t changes_before = 0;
  while (!input.empty()) {
    std::size_t length = input.size();
    if (input.size() >= 2) {
      length = static_cast<unsigned char>(input[0]) << 8 | static_cast<unsigned char>(input[1]);
      input.remove_prefix(2);
      if (length > input.size()) length = input.size();
    }
    std::string_view frame = input.substr(0, length);
    input.remove_prefix(length);
    // Parse alone first: a message the parser takes, it takes twice alike.
    bool parsed = false;
    try {
      auto message = seatwatch::changes::ParsePgoutputMessage(frame);
      parsed = true;
      if (seatwatch::changes::ParsePgoutputMessage(frame).index() != message.index()) {
        std::abort();
      }
    } catch (const PgoutputError&) {
    }
    try {
      decoder.Feed(frame);
    } catch (const PgoutputError&) {
      // The feed would start over with a new slot: so does the decoder.
      decoder.Reset();
      continue;
    }
    if (!parsed) std::abort();  // the decoder took what the parser refused
    // The count only grows.
    if (decoder.decoded_changes() < changes_before) std::abort();
    changes_before = decoder.decoded_changes();
  }
  for (const auto& transaction : decoder.TakeCommitted()) {
    for (const auto& [table, keys] : transaction.keys) {
      if (table.empty()) std::abort();
      (void)keys;
    }
  }
  return 0;
}
