// @ts-check
// GPU Garden frontend entry: registers the extension. Feature files (budget.js, oom_panel.js, ...)
// sit beside it; ComfyUI loads every .js file in WEB_DIRECTORY.
import { app } from "../../scripts/app.js";
import { exposeForTests } from "./lib/format.js";

app.registerExtension({
  name: "GPUGarden.Core",
  async setup() {
    exposeForTests({ loaded: true });
  },
});
