// `npm run licence`: the `bims licence` vendor tool, whose code lives in src/ (src/runtime/commands/licence.ts).
import '../src/runtime/commands/licence.js';
