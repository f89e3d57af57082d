/**
 * Amazon States Language as the frontend validates it. {@link sand.contracts.asl.AslValidator#validate} is the
 * entry point; the rest is internal: the tables of {@code contracts/asl.json} ({@code AslSpec}, which the grain
 * worker's grainworker/asl_spec.py reads too), Paths, intrinsic calls, timestamps and how messages show values.
 */
package sand.contracts.asl;
