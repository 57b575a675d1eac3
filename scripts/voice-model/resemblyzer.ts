/**
 * From a Resemblyzer checkpoint's object to the encoder's weights: where the state_dict is and which of its
 * tensors are the LSTM's and the linear layer's (Resemblyzer's VoiceEncoder: `lstm` = nn.LSTM(40, 256, 3),
 * `linear` = nn.Linear(256, 256); its pretrained.pt is {"step", "model_state", "optimizer_state"}).
 */
import { TensorRef, type PyValue } from './pickle.js';
import { tensorValues } from './torch-checkpoint.js';
import { EMBEDDING, HIDDEN, LAYERS, MEL_BANDS, type Ge2eWeights } from './ge2e-onnx.js';

/** The checkpoint does not hold the encoder's weights (named keys missing or of the wrong shape). */
export class NotAnEncoderError extends Error {
  override name = 'NotAnEncoderError';
}

/** The state_dict: the object itself, or its "model_state" (Resemblyzer) or "state_dict" entry. */
function stateDict(object: PyValue): Map<PyValue, PyValue> {
  if (!(object instanceof Map)) throw new NotAnEncoderError('the checkpoint does not hold a dict');
  for (const key of ['model_state', 'state_dict']) {
    const inner = object.get(key);
    if (inner instanceof Map) return inner;
  }
  return object;
}

/** The encoder's weights, each checked for its shape. */
export function resemblyzerWeights(object: PyValue): Ge2eWeights {
  const dict = stateDict(object);
  const get = (name: string, shape: number[]): Float32Array => {
    const t = dict.get(name);
    if (!(t instanceof TensorRef))
      throw new NotAnEncoderError(
        `the state_dict has no tensor ${name} (keys: ${[...dict.keys()].map(String).slice(0, 12).join(', ')})`,
      );
    if (t.shape.join('x') !== shape.join('x'))
      throw new NotAnEncoderError(`${name} has shape [${t.shape.join(', ')}], expected [${shape.join(', ')}]`);
    return tensorValues(t);
  };
  const layers = Array.from({ length: LAYERS }, (_, k) => ({
    weightIh: get(`lstm.weight_ih_l${k}`, [4 * HIDDEN, k === 0 ? MEL_BANDS : HIDDEN]),
    weightHh: get(`lstm.weight_hh_l${k}`, [4 * HIDDEN, HIDDEN]),
    biasIh: get(`lstm.bias_ih_l${k}`, [4 * HIDDEN]),
    biasHh: get(`lstm.bias_hh_l${k}`, [4 * HIDDEN]),
  }));
  return {
    layers,
    linearWeight: get('linear.weight', [EMBEDDING, HIDDEN]),
    linearBias: get('linear.bias', [EMBEDDING]),
  };
}
