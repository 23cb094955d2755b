// SPDX-License-Identifier: GPL-2.0
/*
 * mpi_xfer: a verified exchange between the two ranks of an MPI job.
 * For each size (eager and rendezvous protocols alike) both ranks send
 * each other ROUNDS messages of pseudo-random bytes that depend on the
 * sender, the size and the round (MPI_Sendrecv); each checks every byte
 * it received. Then an MPI_Allreduce of the error counts, so both ranks
 * know the job's verdict. Exit status 0 only if every byte was right.
 *
 *   mpirun -np 2 ... mpi_xfer [ROUNDS]
 */
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fill_pattern.h"

static void pattern(uint8_t *buf, size_t len, int rank, size_t size, int round)
{
	fill_pattern(buf, len, 0x9e3779b97f4a7c15ULL * (uint64_t)(round + 1) ^
			       ((uint64_t)rank << 40) ^ size);
}

int main(int argc, char **argv)
{
	static const size_t sizes[] = { 1, 8, 1000, 4096, 65536, 1 << 20, 4 << 20 };
	int rounds = argc > 1 ? atoi(argv[1]) : 5;
	int rank, nranks, peer, r, bad = 0, total = 0;
	uint8_t *out, *in, *want;
	size_t max = sizes[sizeof(sizes) / sizeof(sizes[0]) - 1];
	char host[MPI_MAX_PROCESSOR_NAME];
	unsigned int s;
	double t0;
	int hlen;

	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &nranks);
	MPI_Get_processor_name(host, &hlen);
	if (nranks != 2 || rounds < 1) {
		fprintf(stderr, "mpi_xfer: needs 2 ranks (got %d), rounds >= 1\n",
			nranks);
		MPI_Abort(MPI_COMM_WORLD, 2);
	}
	peer = 1 - rank;
	out = malloc(max);
	in = malloc(max);
	want = malloc(max);
	if (!out || !in || !want) {
		fprintf(stderr, "mpi_xfer: out of memory\n");
		MPI_Abort(MPI_COMM_WORLD, 2);
	}
	printf("rank %d of %d on %s\n", rank, nranks, host);
	t0 = MPI_Wtime();
	for (s = 0; s < sizeof(sizes) / sizeof(sizes[0]); s++) {
		for (r = 0; r < rounds; r++) {
			size_t i;

			pattern(out, sizes[s], rank, sizes[s], r);
			memset(in, 0, sizes[s]);
			MPI_Sendrecv(out, sizes[s], MPI_BYTE, peer, r,
				     in, sizes[s], MPI_BYTE, peer, r,
				     MPI_COMM_WORLD, MPI_STATUS_IGNORE);
			pattern(want, sizes[s], peer, sizes[s], r);
			for (i = 0; i < sizes[s]; i++)
				if (in[i] != want[i])
					break;
			if (i < sizes[s]) {
				printf("rank %d: %zu-byte message, round %d: byte %zu is %#x, want %#x\n",
				       rank, sizes[s], r, i, in[i], want[i]);
				bad++;
			}
		}
	}
	MPI_Allreduce(&bad, &total, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
	if (rank == 0)
		printf("mpi_xfer: %d sizes x %d rounds each way in %.2f s, %d bad messages\n",
		       (int)(sizeof(sizes) / sizeof(sizes[0])), rounds,
		       MPI_Wtime() - t0, total);
	free(out);
	free(in);
	free(want);
	MPI_Finalize();
	return total ? 1 : 0;
}
