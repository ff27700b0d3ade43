// model-viewer reads these when an element is created. Our GLBs never use Draco, KTX2, meshopt
// or Lottie, so nothing is fetched from them; pointing them at our own origin (instead of the
// gstatic/jsdelivr defaults) guarantees no request could ever leave the page's origin.
const config = (self.ModelViewerElement = self.ModelViewerElement || {});
config.dracoDecoderLocation ??= "/_sweepbench/model-viewer/draco/";
config.ktx2TranscoderLocation ??= "/_sweepbench/model-viewer/basis/";
config.lottieLoaderLocation ??= "/_sweepbench/model-viewer/lottie/LottieLoader.js";
