// SPDX-License-Identifier: MIT
#pragma once
// `vtrain explore` under mpirun or srun: every rank sweeps one shard of the plan space (balanced by
// estimated work, explorer_shard.h), rank 0 merges the partial results into exactly the single-process
// result, prints it and writes the CSV (or each rank writes its part, with a manifest). Only built
// with VTRAIN_WITH_MPI.
#include <string>
#include <vector>

namespace vtrain::cli::mpi {

// True when an MPI launcher started this process (its environment says so): only then is MPI
// initialised, so that a plain `vtrain explore` stays a single process with no MPI start-up.
bool launched_by_mpi();

int run_explore_mpi(const std::vector<std::string>& argv);

} // namespace vtrain::cli::mpi
