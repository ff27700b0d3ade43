// Stand-in for Excalidraw's subsetting worker entry: no worker URL, so the main thread is used.
export const WorkerUrl = undefined;
