// PNG images for the report's browser test: read what headless Chromium writes (8-bit RGB or RGBA, not
// interlaced), write an 8-bit RGB image (the difference of two screenshots, for review), and compare two
// screenshots within a tolerance. zlib does the (de)compression; nothing else is needed. Header-only: only
// the browser test uses it.
#pragma once

#include <zlib.h>

#include <algorithm>
#include <array>
#include <cstdint>
#include <cstdlib>
#include <fstream>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

namespace trainsim::png {

/// Pixels as RGB, row by row.
struct Image {
  int width = 0, height = 0;
  std::vector<std::uint8_t> rgb;  ///< width * height * 3
  [[nodiscard]] const std::uint8_t* at(int x, int y) const {
    return &rgb[(static_cast<std::size_t>(y) * static_cast<std::size_t>(width) +
                 static_cast<std::size_t>(x)) *
                3];
  }
};

namespace detail {

inline std::uint32_t be32(const std::string& s, std::size_t at) {
  return (std::uint32_t{static_cast<std::uint8_t>(s[at])} << 24) |
         (std::uint32_t{static_cast<std::uint8_t>(s[at + 1])} << 16) |
         (std::uint32_t{static_cast<std::uint8_t>(s[at + 2])} << 8) |
         std::uint32_t{static_cast<std::uint8_t>(s[at + 3])};
}

inline void put32(std::string& out, std::uint32_t v) {
  for (int shift = 24; shift >= 0; shift -= 8) out += static_cast<char>((v >> shift) & 0xff);
}

inline int paeth(int a, int b, int c) {
  const int p = a + b - c;
  const int pa = std::abs(p - a), pb = std::abs(p - b), pc = std::abs(p - c);
  return pa <= pb && pa <= pc ? a : pb <= pc ? b : c;
}

constexpr char kSignature[] = "\x89PNG\r\n\x1a\n";

}  // namespace detail

/// The image in a PNG file, or nullopt with `error` set when it cannot be read or is of a kind this reader
/// does not handle (only 8-bit RGB and RGBA without interlacing).
inline std::optional<Image> read(const std::string& path, std::string& error) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream buffer;
  buffer << in.rdbuf();
  const std::string s = buffer.str();
  if (s.size() < 8 || s.compare(0, 8, detail::kSignature, 8) != 0) {
    error = path + ": not a PNG file";
    return std::nullopt;
  }
  Image img;
  int channels = 0;
  std::string idat;
  for (std::size_t at = 8; at + 12 <= s.size();) {
    const std::uint32_t length = detail::be32(s, at);
    const std::string type = s.substr(at + 4, 4);
    if (at + 12 + length > s.size()) break;
    const std::size_t data = at + 8;
    if (type == "IHDR") {
      img.width = static_cast<int>(detail::be32(s, data));
      img.height = static_cast<int>(detail::be32(s, data + 4));
      const int depth = static_cast<std::uint8_t>(s[data + 8]),
                color = static_cast<std::uint8_t>(s[data + 9]);
      const int interlace = static_cast<std::uint8_t>(s[data + 12]);
      channels = color == 2 ? 3 : color == 6 ? 4 : 0;
      if (depth != 8 || channels == 0 || interlace != 0) {
        error = path + ": only 8-bit RGB or RGBA PNG without interlacing is read";
        return std::nullopt;
      }
    } else if (type == "IDAT") {
      idat += s.substr(data, length);
    } else if (type == "IEND") {
      break;
    }
    at += 12 + length;
  }
  if (channels == 0 || img.width <= 0 || img.height <= 0) {
    error = path + ": no image header";
    return std::nullopt;
  }
  const std::size_t stride = static_cast<std::size_t>(img.width) * static_cast<std::size_t>(channels);
  std::vector<std::uint8_t> raw((stride + 1) * static_cast<std::size_t>(img.height));
  uLongf raw_size = static_cast<uLongf>(raw.size());
  if (uncompress(raw.data(), &raw_size, reinterpret_cast<const Bytef*>(idat.data()),
                 static_cast<uLong>(idat.size())) != Z_OK ||
      raw_size != raw.size()) {
    error = path + ": corrupt image data";
    return std::nullopt;
  }
  // Undo each row's filter (PNG spec, section 9) in place, then keep RGB.
  std::vector<std::uint8_t> previous(stride, 0);
  img.rgb.resize(static_cast<std::size_t>(img.width) * static_cast<std::size_t>(img.height) * 3);
  for (int y = 0; y < img.height; ++y) {
    std::uint8_t* row = &raw[static_cast<std::size_t>(y) * (stride + 1)];
    const int filter = row[0];
    std::uint8_t* px = row + 1;
    for (std::size_t i = 0; i < stride; ++i) {
      const int a = i >= static_cast<std::size_t>(channels) ? px[i - static_cast<std::size_t>(channels)] : 0;
      const int b = previous[i];
      const int c =
          i >= static_cast<std::size_t>(channels) ? previous[i - static_cast<std::size_t>(channels)] : 0;
      int add = 0;
      switch (filter) {
        case 1:
          add = a;
          break;
        case 2:
          add = b;
          break;
        case 3:
          add = (a + b) / 2;
          break;
        case 4:
          add = detail::paeth(a, b, c);
          break;
        default:
          break;
      }
      px[i] = static_cast<std::uint8_t>(px[i] + add);
    }
    std::copy(px, px + stride, previous.begin());
    for (int x = 0; x < img.width; ++x) {
      for (int k = 0; k < 3; ++k)
        img.rgb[(static_cast<std::size_t>(y) * static_cast<std::size_t>(img.width) +
                 static_cast<std::size_t>(x)) *
                    3 +
                static_cast<std::size_t>(k)] = px[static_cast<std::size_t>(x * channels + k)];
    }
  }
  return img;
}

/// Writes an 8-bit RGB PNG.
inline bool write(const std::string& path, const Image& img) {
  std::vector<std::uint8_t> raw;
  const std::size_t stride = static_cast<std::size_t>(img.width) * 3;
  for (int y = 0; y < img.height; ++y) {
    raw.push_back(0);  // no filter
    raw.insert(raw.end(), img.rgb.begin() + static_cast<std::ptrdiff_t>(static_cast<std::size_t>(y) * stride),
               img.rgb.begin() + static_cast<std::ptrdiff_t>(static_cast<std::size_t>(y + 1) * stride));
  }
  uLongf size = compressBound(static_cast<uLong>(raw.size()));
  std::string packed(size, '\0');
  if (compress2(reinterpret_cast<Bytef*>(packed.data()), &size, raw.data(), static_cast<uLong>(raw.size()),
                9) != Z_OK)
    return false;
  packed.resize(size);
  std::string out(detail::kSignature, 8);
  auto chunk = [&out](const std::string& type, const std::string& data) {
    detail::put32(out, static_cast<std::uint32_t>(data.size()));
    const std::string body = type + data;
    out += body;
    detail::put32(out, static_cast<std::uint32_t>(crc32(0, reinterpret_cast<const Bytef*>(body.data()),
                                                        static_cast<uInt>(body.size()))));
  };
  std::string header;
  detail::put32(header, static_cast<std::uint32_t>(img.width));
  detail::put32(header, static_cast<std::uint32_t>(img.height));
  header += std::string("\x08\x02\x00\x00\x00", 5);  // 8-bit RGB, deflate, no filter choice, no interlace
  chunk("IHDR", header);
  chunk("IDAT", packed);
  chunk("IEND", "");
  std::ofstream file(path, std::ios::binary);
  file << out;
  return static_cast<bool>(file);
}

/// How far two screenshots of one page differ, measured on blocks of kBlock x kBlock pixels (their mean
/// colour), so that a glyph antialiased a little differently by another Chromium build does not count, but a
/// missing bar, a moved axis or a changed label does.
struct Difference {
  double blocks_differing = 1;  ///< fraction of blocks whose mean colour differs by more than kBlockTolerance
  Image map;                    ///< the actual screenshot, pale, with differing blocks in red
};

inline constexpr int kBlock = 4;
/// Difference in a block's mean colour, per channel, that counts (of 255).
inline constexpr int kBlockTolerance = 24;

/// Compares images of the same size (a size mismatch is a difference of 1).
inline Difference compare(const Image& expected, const Image& actual) {
  Difference d;
  if (expected.width != actual.width || expected.height != actual.height) return d;
  d.map = actual;
  for (auto& v : d.map.rgb) v = static_cast<std::uint8_t>(255 - (255 - v) / 4);
  std::size_t blocks = 0, differing = 0;
  for (int by = 0; by < actual.height; by += kBlock) {
    for (int bx = 0; bx < actual.width; bx += kBlock) {
      std::array<int, 3> sum_e{}, sum_a{};
      int n = 0;
      for (int y = by; y < std::min(by + kBlock, actual.height); ++y) {
        for (int x = bx; x < std::min(bx + kBlock, actual.width); ++x) {
          for (int k = 0; k < 3; ++k) {
            sum_e[static_cast<std::size_t>(k)] += expected.at(x, y)[k];
            sum_a[static_cast<std::size_t>(k)] += actual.at(x, y)[k];
          }
          ++n;
        }
      }
      ++blocks;
      bool differs = false;
      for (std::size_t k = 0; k < 3; ++k)
        differs = differs || std::abs(sum_e[k] - sum_a[k]) > kBlockTolerance * n;
      if (!differs) continue;
      ++differing;
      for (int y = by; y < std::min(by + kBlock, actual.height); ++y) {
        for (int x = bx; x < std::min(bx + kBlock, actual.width); ++x) {
          auto* p = &d.map.rgb[(static_cast<std::size_t>(y) * static_cast<std::size_t>(actual.width) +
                                static_cast<std::size_t>(x)) *
                               3];
          p[0] = 230;
          p[1] = 40;
          p[2] = 40;
        }
      }
    }
  }
  d.blocks_differing = blocks > 0 ? static_cast<double>(differing) / static_cast<double>(blocks) : 0;
  return d;
}

}  // namespace trainsim::png
