// The browser globals the dashboard's script uses besides the DOM's: uPlot, loaded before it by
// its own <script> tag (/assets/uPlot.min.js).
import type uPlotClass from 'uplot';

declare global {
  const uPlot: typeof uPlotClass;
  type uPlot = uPlotClass;
  namespace uPlot {
    type AlignedData = uPlotClass.AlignedData;
    type Options = uPlotClass.Options;
  }
}
