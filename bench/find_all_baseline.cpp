// bench/find_all_baseline.cpp: a baseline for bench/find_all.sh, written
// in the style of seomoz simhash-cpp's find_all: the hashes in an
// std::unordered_set; per table, permute them into a vector (per block: a
// mask and a signed shift, branching on its sign), std::sort it, walk the
// runs of equal prefixes comparing all pairs (bit count by clearing the
// lowest set bit), and collect matches in an std::unordered_set of pairs
// (which is how it reports a pair found by several tables once).  Same
// block geometry as src/core/blocks.c, so it finds the same pairs.
//
//	find_all_baseline FILE DISTANCE BLOCKS...	(FILE: raw uint64 values)
#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <unordered_set>
#include <utility>
#include <vector>

typedef uint64_t hash_t;
typedef std::pair<hash_t, hash_t> match_t;

struct match_hash
{
	size_t operator()(const match_t &m) const { return m.first * 31 + m.second; }
};
typedef std::unordered_set<match_t, match_hash> matches_t;

static size_t
differing_bits(hash_t a, hash_t b)
{
	size_t		count = 0;

	for (hash_t n = a ^ b; n; n &= n - 1)
		++count;
	return count;
}

struct Permutation
{
	std::vector<hash_t> masks;		// forward: chosen blocks, then the others
	std::vector<int> shifts;		// > 0: left, < 0: right
	hash_t		search_mask = 0;	// the chosen blocks, permuted

	hash_t apply(hash_t h) const
	{
		hash_t		r = 0;

		for (size_t i = 0; i < masks.size(); ++i)
			r |= shifts[i] > 0 ? (h & masks[i]) << shifts[i] : (h & masks[i]) >> -shifts[i];
		return r;
	}

	hash_t reverse(hash_t p) const
	{
		hash_t		r = 0;

		for (size_t i = 0; i < masks.size(); ++i)
		{
			hash_t		back = shifts[i] > 0 ? masks[i] << shifts[i] : masks[i] >> -shifts[i];

			r |= shifts[i] > 0 ? (p & back) >> shifts[i] : (p & back) << -shifts[i];
		}
		return r;
	}
};

static std::vector<Permutation>
make_permutations(int m, int k)
{
	std::vector<int> width(m), offset(m);
	std::vector<Permutation> perms;
	std::vector<int> comb(m - k);

	for (int i = 0, o = 0; i < m; ++i)
	{
		width[i] = 64 / m + (i < 64 % m);
		offset[i] = o;
		o += width[i];
	}
	for (int i = 0; i < m - k; ++i)
		comb[i] = i;
	for (;;)
	{
		Permutation p;
		std::vector<int> order(comb);
		int			dest = 0;

		for (int i = 0; i < m; ++i)
			if (std::find(comb.begin(), comb.end(), i) == comb.end())
				order.push_back(i);
		for (size_t q = 0; q < order.size(); ++q)
		{
			int			b = order[q];
			hash_t		mask = (width[b] == 64 ? ~hash_t(0) : ((hash_t(1) << width[b]) - 1))
				<< (64 - offset[b] - width[b]);

			p.masks.push_back(mask);
			p.shifts.push_back(offset[b] - dest);
			if ((int) q < m - k)
				p.search_mask |= p.shifts.back() > 0 ? mask << p.shifts.back() : mask >> -p.shifts.back();
			dest += width[b];
		}
		perms.push_back(p);

		int			i = m - k - 1;

		while (i >= 0 && comb[i] == i + k)
			--i;
		if (i < 0)
			return perms;
		++comb[i];
		for (int j = i + 1; j < m - k; ++j)
			comb[j] = comb[j - 1] + 1;
	}
}

static matches_t
find_all(const std::unordered_set<hash_t> &hashes, int m, int k)
{
	std::vector<hash_t> copy(hashes.size());
	matches_t	results;

	for (const Permutation &perm : make_permutations(m, k))
	{
		std::transform(hashes.begin(), hashes.end(), copy.begin(),
					   [&perm](hash_t h) { return perm.apply(h); });
		std::sort(copy.begin(), copy.end());

		for (auto start = copy.begin(); start != copy.end();)
		{
			hash_t		prefix = *start & perm.search_mask;
			auto		end = start;

			while (end != copy.end() && (*end & perm.search_mask) == prefix)
				++end;
			for (auto a = start; a != end; ++a)
				for (auto b = a + 1; b != end; ++b)
					if (differing_bits(*a, *b) <= (size_t) k)
					{
						hash_t		x = perm.reverse(*a),
									y = perm.reverse(*b);

						results.insert(match_t(std::min(x, y), std::max(x, y)));
					}
			start = end;
		}
	}
	return results;
}

static double
cpu_seconds()
{
	timespec	ts;

	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
	return ts.tv_sec + ts.tv_nsec * 1e-9;
}

int
main(int argc, char **argv)
{
	if (argc < 4)
	{
		std::fprintf(stderr, "usage: %s FILE DISTANCE BLOCKS...\n", argv[0]);
		return 2;
	}
	FILE	   *in = std::fopen(argv[1], "rb");
	std::vector<hash_t> values;
	hash_t		v;

	if (!in)
	{
		std::perror(argv[1]);
		return 1;
	}
	while (std::fread(&v, sizeof(v), 1, in) == 1)
		values.push_back(v);
	std::fclose(in);

	std::unordered_set<hash_t> hashes(values.begin(), values.end());
	int			k = std::atoi(argv[2]);

	for (int a = 3; a < argc; ++a)
	{
		int			m = std::atoi(argv[a]);
		double		t0 = cpu_seconds();
		matches_t	matches = find_all(hashes, m, k);
		double		t = cpu_seconds() - t0;

		std::printf("baseline blocks=%d distance=%d cpu_s=%.3f pairs=%zu distinct_values=%zu\n",
					m, k, t, matches.size(), hashes.size());
		std::fflush(stdout);
	}
	return 0;
}
