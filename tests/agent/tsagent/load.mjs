// Loads an agent with tsagent's own loader and prints what tsagent read, as JSON.
//   node load.mjs PATH          load (tsagent migrates a tsagent.json folder to tsagent.yaml)
//   node load.mjs PATH --save   load, then save it as tsagent does after an edit
// On failure: tsagent's message on stderr, exit status 1.
import { register } from "node:module";

register("./sharp-stand-in.mjs", import.meta.url);

const quiet = () => {};
const logger = { info: quiet, debug: quiet, verbose: quiet, warn: quiet, error: quiet };

const [path, action] = process.argv.slice(2);
try {
  const { loadAgent } = await import("@tsagent/core/runtime");
  const agent = await loadAgent(path, logger);
  if (action === "--save") {
    await agent.save();
  }
  process.stdout.write(JSON.stringify(agent._agentData));
} catch (error) {
  process.stderr.write(String(error?.message ?? error));
  process.exit(1);
}
