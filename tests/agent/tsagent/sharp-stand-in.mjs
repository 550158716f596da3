// A Node resolve hook: `sharp` (an image library @tsagent/core pulls in through
// @xenova/transformers) downloads a native binary at install, which `npm ci --ignore-scripts`
// skips. Loading agents never uses it, so it resolves to a stand-in that fails if called.
const STAND_IN =
  "data:text/javascript," +
  encodeURIComponent(
    'export default function sharp() { throw new Error("sharp is not installed (a stand-in)"); }',
  );

export async function resolve(specifier, context, nextResolve) {
  if (specifier === "sharp") {
    return { url: STAND_IN, shortCircuit: true };
  }
  return nextResolve(specifier, context);
}
