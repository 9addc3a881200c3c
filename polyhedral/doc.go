// Package polyhedral is gxbit's model of loop nests as integer polyhedra:
// affine expressions over loop indices and parameters (Expr), iteration
// domains of rectangular, triangular and strided nests (Domain), memory
// access sites with affine byte addresses (Access), and the exact questions
// the pipeline asks of them.
//
// Phase 1 (package profile) fits access functions and bounds from traces
// and calls Analyze to mark each loop level parallel, reduction or
// sequential, with the conflicting pair of sites and a witness pair of
// iterations as the reason. Phase 2 (package ptxgen and the guards) calls
// Footprint for the byte range each access touches, Range.Overlaps for the
// aliasing guard, TripCount for the launch size, and Depends with concrete
// parameter values when a guard must re-check a dependence.
//
// Every answer is exact over the integers. Where a question cannot be
// decided within budget or int64 arithmetic, the functions return an error
// (ErrTooComplex, ErrOverflow) and Analyze reports the level as sequential:
// the package never claims independence it has not proved.
//
// # Imperfect nests
//
// A nest whose loops hold sibling loops and code around them (gemm's
// `for i { for j: C *= beta; for k { for j: C += A*B } }`) is a tree. Its
// Domain lists the loops in pre-order, and each Access names the loops on
// its own path (Access.Loops): the exact test then runs each site over
// its own iterations only, and two sites agree on the loops they share
// above the tested one. Analyze gives a verdict for every loop of the tree.
//
// # Parameters
//
// Variables of bounds and addresses that are not loop indices are
// parameters (bound0, var0, ...). Given a value in Options.Params they are
// constants; without one they are unknowns limited only by Domain.Assume,
// and Depends then answers "independent" only if that holds for every
// allowed value. Its witness names the parameter values it chose.
// Coefficients are int64 constants: an address such as A[i*n + j] with n a
// parameter is not affine and must be given with n's fitted value.
//
// # RATIONALE: the exact test
//
// The dependence question is whether a system of linear equalities and
// inequalities (two copies of the domain, equal outer indices, an order at
// the tested level, and byte-range overlap) has an integer solution. GCD
// and Banerjee tests answer it only approximately; enumeration answers it
// only for small bounds. We use the Omega test (W. Pugh, "The Omega test: a
// fast and practical integer programming algorithm for dependence
// analysis", 1991), which is exact, produces a witness, handles unbounded
// parameters, and is fast on the small, nearly unit-coefficient systems
// that loop nests give:
//
//   - Equalities are removed one variable at a time; a non-unit
//     coefficient is first reduced with Pugh's symmetric-modulo step, which
//     introduces a fresh integer variable. This is exact (GCD included).
//   - Inequalities are normalised by the gcd of their coefficients, with
//     the constant floored (integer tightening); opposite pairs become
//     equalities or contradictions.
//   - Fourier–Motzkin elimination removes the remaining variables. When one
//     side's coefficients are all 1 the projection is exact. Otherwise the
//     real shadow (infeasible: no solution), then the dark shadow (feasible:
//     solution) are tried, and if neither decides, the problem is
//     splintered into the finitely many equality-constrained cases near a
//     lower bound that the dark shadow can miss.
//
// Witnesses are rebuilt by back-substitution and checked against the
// original constraints before they are returned, so a wrong witness is
// reported as an error, never as an answer. Footprints use the same test:
// the minimum of an affine address over the domain is found by bisection
// on "some iteration has addr <= v", which stays exact for triangular and
// strided nests where per-level interval reasoning is not.
package polyhedral
