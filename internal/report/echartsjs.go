package report

// EChartsJS is the chart library the HTML report inlines (Apache ECharts,
// see assets/ECHARTS-LICENSE), for the pages other packages build (the
// history's), so that every page of benchlab opens offline with one copy
// of one library.
func EChartsJS() string { return echartsJS }
