// SPDX-License-Identifier: MIT
#pragma once
// The writers of generated files under hostile strings (issue 32): the fuzz_writers target and the replay
// test feed them bytes and hold them to one contract (a violation aborts, so libFuzzer reports a crash).
// The bytes are split at 0xFF into up to three strings: a model name, a description and a pipeline layout.
//  - TOML (torchtitan_launch): the name lands in one comment line; every other line is the same as with
//    a plain name, and the comment, read as a TOML basic string's body, gives the name back.
//  - JSON (scenario_to_json, dumped and read again): the name and description come back unchanged, and the
//    text holds no raw control character.
//  - Shell (shell_quoted, and Megatron's command line when the layout is accepted): each word parses back
//    (POSIX quoting, no expansion anywhere) to exactly the string, as one word.
//  - Messages (json_fields::printable and bounded): no control character, no byte that is not UTF-8.
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace vtrain::fuzz {

void check_writers(std::string_view data);

// The value of a TOML basic string's body (the text between the quotes); nullopt when it is not one
// (a raw control character or '"', an unknown escape).
std::optional<std::string> toml_basic_string_value(std::string_view body);

// The words of POSIX shell text without expansions: blanks separate words, backslash-newline joins lines,
// single quotes keep everything, double quotes keep everything but \$ \` \" \\ and \newline. nullopt when
// anything could expand or act (an unquoted $ ` ; & | < > ( ) * ? [ ] { } ~ # !, or $ ` in double quotes)
// or a quote is not closed.
std::optional<std::vector<std::string>> shell_words(std::string_view text);

} // namespace vtrain::fuzz
