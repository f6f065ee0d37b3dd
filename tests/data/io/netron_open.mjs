// Open a model file with Netron's own loaders (the `netron` PyPI package's JS) under
// node and print, as JSON, what Netron would show: the format, and per graph its inputs,
// outputs and nodes, with weights (initializers) decoded when they are float32.
// Called by tests/test_paddle_compat.py:  node netron_open.mjs NETRON_DIR MODEL_PATH
import * as fs from 'fs';
import * as path from 'path';
import { pathToFileURL } from 'url';

const [dir, modelPath] = process.argv.slice(2);
const load = (name) => import(pathToFileURL(path.join(dir, name)).href);
const view = await load('view.js');
const node = await load('node.js');

const open = (p) => new node.FileStream(p, 0, fs.statSync(p).size, fs.statSync(p).mtimeMs);
const host = {
    environment: (name) => ({ zoom: 'none', measure: false }[name]),
    require: (id) => load(`${id}.js`),
    asset: async (file) => fs.readFileSync(path.join(dir, file), 'utf-8'),
    exception: (error) => { console.error(`netron: ${error.message}`); },
    event: () => {},
};
// The context Netron's browser and electron hosts hand to ModelFactoryService.open:
// `fetch` finds files next to the model (how Netron finds <base>.pdiparams).
const context = {
    identifier: path.basename(modelPath),
    stream: open(modelPath),
    asset: host.asset,
    require: host.require,
    error: host.exception,
    async fetch(file, encoding, base) {
        const p = path.join(base || path.dirname(modelPath), file);
        if (!fs.existsSync(p)) {
            throw new Error(`File not found '${file}'.`);
        }
        return encoding ? fs.readFileSync(p, encoding) : open(p);
    },
};

const value = (v) => {
    const t = v.initializer;
    if (!t) {
        return { name: v.name, init: null };
    }
    const bytes = t.values;
    const floats = t.type.dataType === 'float32' && bytes instanceof Uint8Array ?
        Array.from(new Float32Array(bytes.slice().buffer)) : null;
    return { name: v.name, init: { dtype: t.type.dataType, shape: t.type.shape.dimensions,
        bytes: bytes ? bytes.byteLength : null, values: floats } };
};

try {
    const model = await new view.ModelFactoryService(host).open(context);
    const graphs = (model.modules || model.graphs).map((graph) => ({
        name: graph.name,
        inputs: graph.inputs.map((a) => a.value.map((v) => v.name)).flat(),
        outputs: graph.outputs.map((a) => a.value.map((v) => v.name)).flat(),
        nodes: graph.nodes.map((n) => ({
            type: n.type.name,
            inputs: Object.fromEntries(n.inputs.map((a) => [a.name, a.value.map(value)])),
            attributes: Object.fromEntries((n.attributes || [])
                .filter((a) => a.visible !== false)
                .map((a) => [a.name, typeof a.value === 'bigint' ? Number(a.value) : a.value])),
        })),
    }));
    console.log(JSON.stringify({ format: model.format, graphs }));
} catch (error) {
    console.log(JSON.stringify({ error: `${error.name}: ${error.message}` }));
    process.exitCode = 1;
}
