// Reads the moov box's data (already in Movie::moov) as nginx's mp4 module
// does: mvhd, and per trak tkhd, mdia (mdhd, hdlr, minf: vmhd or smhd,
// dinf, stbl: stsd, stts, stss, ctts, stsc, stsz, stco or co64). Each
// table's entry count is checked against its box before anything is kept;
// a track that ends before the start time is dropped, as nginx drops it.
// The durations of mvhd and tkhd are rewritten for the cut here.
#pragma once

#include "modules/mp4/movie.h"

namespace torii::mp4 {

// False with `m.error` set when the file is refused.
bool read_moov(Movie& m);

}  // namespace torii::mp4
