#include "sim/gzip.hpp"

#include <zlib.h>

#include <algorithm>
#include <string>

#include "sim/error.hpp"

namespace trainsim::sim {

std::string gzip(std::string_view text) {
  // One deflate call takes at most 4 GiB (zlib counts in 32 bits); a trace is capped far below that.
  TRAINSIM_CHECK(text.size() < (std::size_t{1} << 32), "gzip: text of 4 GiB or more");
  z_stream z{};
  // windowBits 15 + 16: a gzip header and trailer instead of zlib's.
  TRAINSIM_CHECK(deflateInit2(&z, Z_BEST_SPEED, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) == Z_OK,
                 "zlib could not start a gzip stream");
  std::string out(deflateBound(&z, static_cast<uLong>(text.size())), '\0');
  z.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(text.data()));  // zlib's API is not const
  z.avail_in = static_cast<uInt>(text.size());
  z.next_out = reinterpret_cast<Bytef*>(out.data());
  z.avail_out = static_cast<uInt>(out.size());
  const int done = deflate(&z, Z_FINISH);
  out.resize(z.total_out);
  deflateEnd(&z);
  TRAINSIM_CHECK(done == Z_STREAM_END, "zlib could not finish a gzip stream");
  return out;
}

std::string gunzip(std::string_view data, std::size_t max_bytes, std::string_view label) {
  auto fail = [&](std::string_view why) {
    return InputError({Diagnostic{.file = std::string(label), .message = std::string(why)}});
  };
  z_stream z{};
  if (inflateInit2(&z, 15 + 16) != Z_OK) throw fail("zlib could not start reading gzip");
  std::string out;
  std::size_t in_offset = 0;
  constexpr std::size_t kChunk = std::size_t{1} << 20;
  int status = Z_OK;
  char buffer[1 << 16];
  while (status != Z_STREAM_END) {
    if (z.avail_in == 0 && in_offset < data.size()) {
      const std::size_t n = std::min(kChunk, data.size() - in_offset);
      z.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(data.data() + in_offset));  // zlib is not const
      z.avail_in = static_cast<uInt>(n);
      in_offset += n;
    }
    z.next_out = reinterpret_cast<Bytef*>(buffer);
    z.avail_out = sizeof buffer;
    status = inflate(&z, Z_NO_FLUSH);
    out.append(buffer, sizeof buffer - z.avail_out);
    if (status == Z_BUF_ERROR && z.avail_in == 0 && in_offset == data.size()) {
      inflateEnd(&z);  // every byte read and the member not finished
      throw fail("gzip data cut short");
    }
    if (status != Z_OK && status != Z_STREAM_END && status != Z_BUF_ERROR) {
      const std::string why =
          std::string("not valid gzip data (") + (z.msg != nullptr ? z.msg : "zlib error") + ")";
      inflateEnd(&z);
      throw fail(why);
    }
    if (out.size() > max_bytes) {
      inflateEnd(&z);
      throw fail("inflates to more than " + std::to_string(max_bytes) + " bytes, the limit for this input");
    }
  }
  inflateEnd(&z);
  return out;
}

}  // namespace trainsim::sim
