#!/bin/bash
# Slurm batch script for configs/cluster/llama3-405b-multinode.toml: 4 nodes, 8 processes per
# node (one per GPU), results under ./results on the submitting file system.
#
#   sbatch configs/cluster/slurm-multinode.sh
#   sbatch --export=ALL,TARGET=/lustre/$USER/ckpt,LAUNCHER=mpirun configs/cluster/slurm-multinode.sh
#
#SBATCH --job-name=ckptbench-405b
#SBATCH --nodes=4
#SBATCH --ntasks-per-node=8
#SBATCH --cpus-per-task=4
#SBATCH --time=01:00:00
#SBATCH --exclusive
#SBATCH --output=ckptbench-%j.out
set -euo pipefail

cd "${SLURM_SUBMIT_DIR:-$(pwd)}"
BIN=${CKPTBENCH:-build/bin/ckptbench}
CAMPAIGN=${CAMPAIGN:-configs/cluster/llama3-405b-multinode.toml}
TARGET=${TARGET:-/scratch/$USER/ckptbench}
LAUNCHER=${LAUNCHER:-srun}

[[ -x "$BIN" ]] || { echo "slurm-multinode.sh: $BIN not found: build first (ci/build.sh)" >&2; exit 2; }
"$BIN" run "$CAMPAIGN" --dry-run --set campaign.target="$TARGET"

# 32 processes = the campaign's 32 modeled ranks; ranks are dealt to processes in blocks, so
# process p of node n writes rank p, and read_shift makes it read rank p + 8 (the next node's).
# The campaign asks Open MPI for ROMIO (campaign.mpi_io = "romio"), which serves HDF5's
# per-dataset access far better than the default OMPIO.
case "$LAUNCHER" in
  srun)
    # OpenMPI built with PMIx: srun starts the processes directly.
    srun --mpi=pmix --cpu-bind=cores "$BIN" run "$CAMPAIGN" --set campaign.target="$TARGET" --output results
    ;;
  mpirun)
    mpirun -np "$SLURM_NTASKS" --map-by ppr:8:node --bind-to core \
      "$BIN" run "$CAMPAIGN" --set campaign.target="$TARGET" --output results
    ;;
  *) echo "slurm-multinode.sh: LAUNCHER must be srun or mpirun (got $LAUNCHER)" >&2; exit 2 ;;
esac
