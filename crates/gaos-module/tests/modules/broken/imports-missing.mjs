import rules from "./no-such-file.mjs";
export default rules;
