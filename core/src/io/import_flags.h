// SPDX-License-Identifier: MIT
#pragma once
// Command-line flags out of shell words (internal to the importers): "--name value", "--name=value",
// switches and lists, the launcher's (torchrun, deepspeed, python -m torch.distributed.run) apart from
// the training script's, so that the world size can be read, and each flag marked when a reader takes it.
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "io/import_draft.h"
#include "io/import_shell_words.h"

namespace vtrain::import_detail {

enum class FlagArity { Switch, Value, List };

struct Flag {
    std::string name; // with its dashes: "--num-layers"
    std::vector<std::string> values;
    std::string unresolved; // a shell reference its value still holds ("$TP")
    int count = 0;          // times given (argparse keeps the last)
    bool used = false;
};

class Flags {
public:
    // `arity` names the flags whose arity is known; the rest take the words up to the next flag.
    Flags(const ShellWords& words, const std::map<std::string, FlagArity>& arity);

    // The flag (marked used), or nullptr when absent.
    Flag* take(const std::string& name);
    bool has(const std::string& name) const { return m_flags.count(name) != 0; }
    // The single value of a flag, or nullptr when absent; a flag without a value, or one whose value the
    // text does not set, is an error naming it.
    const std::string* value(const std::string& name, Draft& d);
    // A switch: true when given (a value given to it is an error).
    bool on(const std::string& name, Draft& d);
    // Sets `field` to the flag's number (the scenario reader range-checks it later); the number, or nullopt.
    std::optional<nlohmann::json> number(const std::string& name, const std::string& field, Draft& d);
    // The plain words (not flags or their values): scripts, positional arguments, key=value overrides.
    const std::vector<ShellWord>& others() const { return m_others; }
    // The flags no reader took, in the order first given.
    std::vector<const Flag*> unused() const;
    // Flags given more than once (argparse keeps the last value): a note for each.
    void note_repeats(Draft& d) const;

    // torchrun / deepspeed / torch.distributed.launch options: --nproc_per_node x --nnodes (or
    // --num_gpus x --num_nodes) as the world size, and the node size.
    void read_launcher(Draft& d);

private:
    std::map<std::string, Flag> m_flags;
    std::vector<std::string> m_order;
    std::vector<ShellWord> m_others;
};

// The launcher options every format's command line may carry (torchrun, deepspeed, torch.distributed.launch).
const std::map<std::string, FlagArity>& launcher_flags();

} // namespace vtrain::import_detail
