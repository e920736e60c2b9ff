// Reading metrics out of a run's output. The autoresearch format: a line
// `---`, then `key: value` lines (`val_bpb: 0.997900`). Pure functions.
#pragma once

#include <map>
#include <string>
#include <string_view>

namespace ratchet {

/// Every `key: value` line of the summary: the lines after the last `---`
/// line if there is one, else every such line of the output. A later line
/// wins over an earlier one. Values that are not numbers are skipped; "nan"
/// and "inf" are kept (as NaN/inf) so the caller can call them a crash.
std::map<std::string, double> ParseSummary(std::string_view output);

/// The last match of `regex`'s one capture group in `output`, as a number.
/// False if no match or the capture is not a number.
bool ParseMetricRegex(std::string_view output, const std::string& regex, double* value);

/// True for a progress line (`progress: elapsed=12.3 loss=2.41`).
bool IsProgressLine(std::string_view line);

/// A whole-string number (surrounding spaces allowed), including nan/inf
/// spellings and a unit-less trailing '%'; false otherwise.
bool ParseNumber(std::string_view text, double* value);

}  // namespace ratchet
