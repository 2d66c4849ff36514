// speedscope_tree.js DIR FOLDED: imports the folded stacks in FOLDED with
// the importer of the speedscope release installed in DIR
// (scripts/install-speedscope.sh), the code speedscope's page runs on a
// dropped file, and prints as JSON what it made of them: every frame
// (name, self and total weight) and the call tree it draws (the
// left-heavy view's, whose nodes are keyed by frame).
//
// The release is one bundle that renders the page once its modules are
// set up. This script runs it without a page: the few browser globals
// the setup reads are stubbed, and the bundle hands over its import
// module where it would render. Each lookup in the bundle must find
// exactly one match, so a release built otherwise fails loudly.
'use strict';
const fs = require('fs');
const path = require('path');
const vm = require('vm');

const [dir, folded] = process.argv.slice(2);
const release = path.join(dir, 'node_modules', 'speedscope', 'dist', 'release');
const bundles = fs.readdirSync(release).filter(f => /^speedscope-.*\.js$/.test(f));
if (bundles.length !== 1) throw new Error(`${release}: ${bundles.length} speedscope bundles`);
let src = fs.readFileSync(path.join(release, bundles[0]), 'utf8');

// The import module, which the page loads lazily, as the promise of its
// exports: importProfileGroupFromText(fileName, contents) recognises the
// format, then parses it.
const quote = s => s.replace(/\$/g, '\\$');
const exportsOf = [...src.matchAll(/[\w$]+\(([\w$]+),\{[^}]*\bimportProfileGroupFromText:\(\)=>/g)];
if (exportsOf.length !== 1) throw new Error(`the import module's exports: ${exportsOf.length} candidates`);
const ns = quote(exportsOf[0][1]);
const lazy = [...src.matchAll(new RegExp(`var ([\\w$]+)=Promise\\.resolve\\(\\)\\.then\\(\\(\\)=>\\([\\w$]+\\(\\),${ns}\\)\\);`, 'g'))];
if (lazy.length !== 1) throw new Error(`the import module's promise: ${lazy.length} candidates`);
const render = 'console.log(`speedscope v';
if (src.split(render).length !== 2) throw new Error('the page rendering: not found once');
src = src.replace(render, `globalThis.importModule=${lazy[0][1]};return;` + render);

const logs = [];
const ctx = vm.createContext({
  console: {log: (...a) => logs.push(a.join(' ')), warn: (...a) => logs.push(a.join(' ')), error: (...a) => logs.push(a.join(' '))},
  TextDecoder, TextEncoder, setTimeout, clearTimeout, URL,
  location: {hash: '', protocol: 'file:', href: 'file:///'},
  localStorage: {},
  matchMedia: () => ({matches: false, addEventListener() {}, addListener() {}}),
  addEventListener() {},
  navigator: {userAgent: 'node'},
});
ctx.globalThis = ctx.window = ctx.self = ctx;
vm.runInContext(src, ctx);

(async () => {
  const group = await (await ctx.importModule).importProfileGroupFromText(path.basename(folded), fs.readFileSync(folded, 'utf8'));
  if (!group || group.profiles.length !== 1) throw new Error(`no profile: ${JSON.stringify(logs)}`);
  const p = group.profiles[0];
  const frames = [];
  p.forEachFrame(f => frames.push({name: f.name, self: f.getSelfWeight(), total: f.getTotalWeight()}));
  const tree = n => ({name: n.frame.name, self: n.getSelfWeight(), total: n.getTotalWeight(), children: n.children.map(tree)});
  const root = p.getGroupedCalltreeRoot();
  process.stdout.write(JSON.stringify({log: logs, total: p.getTotalWeight(), frames, roots: root.children.map(tree)}));
})().catch(e => { console.error(e); process.exit(1); });
