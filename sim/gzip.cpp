#include "sim/gzip.hpp"

#include <zlib.h>

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

}  // namespace trainsim::sim
