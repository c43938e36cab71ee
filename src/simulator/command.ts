// Moved: the command is cli/commands/simulate.ts, the parsing of its flags simulator/options.ts.
export { simulatorOptionsFromFlags } from './options.js';
