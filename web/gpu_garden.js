// @ts-check
// GPU Garden frontend entry: registers the extension. Feature files (budget.js, oom_panel.js, ...)
// sit beside it; ComfyUI loads every .js file in WEB_DIRECTORY.
import { app } from "../../scripts/app.js";
import { exposeForTests } from "./lib/format.js";
import { followEnteredSubgraphs } from "./lib/graph_adapter.js";

app.registerExtension({
  name: "GPUGarden.Core",
  async setup() {
    followEnteredSubgraphs(); // the canvas exists by setup: which subgraph instance the user enters, from now on
    exposeForTests({ loaded: true });
  },
});
