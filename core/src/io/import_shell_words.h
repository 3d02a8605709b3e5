// SPDX-License-Identifier: MIT
#pragma once
// The words of a shell script or command line as bash would pass them (internal to the importers of
// Megatron-LM arguments and Megatron-Bridge overrides): quotes, backslash-newline continuations and
// comments; variables set in the text (NAME=value, export, NAME=( ... ) arrays) expanded in the words
// after them ($NAME, ${NAME}, ${NAME:-default}, ${NAME[@]}, $((arithmetic))), unquoted expansions split
// into words. What the text cannot say ($(command), a variable it never sets) stays as written and is
// marked unresolved. Bounded for hostile input: at most kMaxShellWords words and kMaxShellChars
// characters after expansion.
#include <cstddef>
#include <map>
#include <string>
#include <vector>

namespace vtrain::import_detail {

constexpr std::size_t kMaxShellWords = 1'000'000;
constexpr std::size_t kMaxShellChars = 32u << 20;

struct ShellWord {
    std::string text;
    std::size_t line = 1;       // where it starts
    bool assignment = false;    // NAME=value at the start of a command (also kept as a variable)
    bool command_start = false; // the first word of a command (after a newline, ';', '&&', '|' ...)
    std::string unresolved;     // the first variable or substitution the text does not set ("$TP", "$(nproc)")
};

struct ShellWords {
    std::vector<ShellWord> words;
    std::map<std::string, std::vector<std::string>> variables; // as set by the end of the text
    std::vector<std::string> array_elements;                   // every array assignment's words, in order
    bool arrays_expanded = false;                              // some word expanded an array
    std::string error;                                         // non-empty: the text could not be split
};

ShellWords split_shell_words(const std::string& text);

} // namespace vtrain::import_detail
