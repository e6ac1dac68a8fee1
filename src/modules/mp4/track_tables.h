// Cuts one track's sample tables to the request's time range, as nginx's
// mp4 module does, in its order: stts gives the first and last sample
// (moved back to a key frame with mp4_start_key_frame), then stss, ctts,
// stsc (first and last chunk, and the samples of a chunk cut in two), stsz
// (the bytes of those samples) and stco/co64 (the first and last byte kept
// in the file). Every table was bounded when it was read; every index
// taken from the file is checked against its table here.
#pragma once

#include <cstdint>

#include "modules/mp4/movie.h"

namespace torii::mp4 {

// Cuts the tables and works out the sizes of the track's boxes (written
// into their headers) and its byte range in the file. False with
// `m.error` set when the file is refused.
bool cut_track(Movie& m, Track& t);

// Moves the track's chunk offsets by `adjustment`: where its first kept
// byte lands in the response.
void adjust_chunk_offsets(Track& t, int64_t adjustment);

}  // namespace torii::mp4
