// What tsagent's own internal servers answer, to compare Foundry's with:
//   node tsagent_internal.mjs LOADER_DIR AGENT_PATH CALLS
// LOADER_DIR holds @tsagent/core (npm ci --ignore-scripts) and its sharp stand-in
// (tests/agent/tsagent); CALLS is JSON, a list of [server kind, tool, arguments]. Prints the
// text of each answer, as a JSON list. Calls that need a chat session are not made here.
import { register } from "node:module";
import { join } from "node:path";
import { pathToFileURL } from "node:url";

const [loaderDir, agentPath, calls] = process.argv.slice(2);
register(pathToFileURL(join(loaderDir, "sharp-stand-in.mjs")).href, import.meta.url);
const core = join(loaderDir, "node_modules", "@tsagent", "core", "dist", "esm");
const from = (file) => import(pathToFileURL(join(core, file)).href);

const quiet = () => {};
const logger = { info: quiet, debug: quiet, verbose: quiet, warn: quiet, error: quiet };
const { loadAgent } = await from("runtime-esm.js");
const { McpClientInternalRules } = await from("mcp/client-rules.js");
const { McpClientInternalReferences } = await from("mcp/client-references.js");

const agent = await loadAgent(agentPath, logger);
const servers = {
  rules: new McpClientInternalRules(agent, logger),
  references: new McpClientInternalReferences(agent, logger),
};
const answers = [];
for (const [kind, tool, args] of JSON.parse(calls)) {
  const result = await servers[kind].callTool({ name: tool }, args);
  answers.push(result.content.map((part) => part.text).join(""));
}
process.stdout.write(JSON.stringify(answers));
