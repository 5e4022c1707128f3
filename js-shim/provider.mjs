// js-shim/provider.mjs — the node/1 entry of the e2b-wasm abx provider
// plugin, as source: ./build.sh bundles it with the rest of js-shim/ into
// provider.mjs at the repository's root, the entry hosts import (one file to
// resolve, read and compile instead of four: docs/PERFORMANCE.md, "Start-up").
// All protocol logic runs in wasm/core.wasm; js-shim/ only moves bytes.
// The host contract this relies on is written down in docs/host-contract.md.
import { createDispatcher } from './dispatcher.mjs'

// For hosts with no file system (a Worker, an embedded engine): hand over the
// bytes of wasm/core.wasm (or a compiled WebAssembly.Module) before buildInfra.
export { useCoreModule } from './core-module.mjs'

// In-process, the host fills the config from its own (abx-provider.toml's fields).
const KEY_HINT = "set it in the host's config: 'abx config set providers.e2b-wasm.api_key', or ABX_E2B_WASM_API_KEY or E2B_API_KEY in its environment"

export default function create(kit) {
  return {
    async buildInfra(ctx) {
      if (!kit || !kit.epp || typeof kit.epp.infra !== 'function')
        throw new Error("e2b-wasm needs a host with kit.epp.infra (node/1); or run 'node js-shim/epp-stdio.mjs'")
      // The host runs the dispatcher in-process and adapts it to its protocol objects.
      return kit.epp.infra(ctx, (hostCtx = ctx) => createDispatcher({ ctx: hostCtx, keyHint: KEY_HINT }))
    },
  }
}
