// What k6's runtime gives a script that Node does not: config.js checks for it at run time.
declare const __ENV: Record<string, string | undefined>;
