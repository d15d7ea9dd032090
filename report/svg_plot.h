// Plots as inline SVG for the HTML report: line/scatter plots with linear, logarithmic or
// categorical axes, straight reference lines (roofs), and grouped bar charts. Every data mark
// (a point or a bar) carries class "mark" and a <title> with its values, and each plot's <svg>
// says how many marks it should hold (data-expected-marks), so a browser can check that every
// plot rendered completely (report/html_page.h). No scripts, no external resources.
#pragma once
#include <cmath>
#include <string>
#include <vector>

namespace sfumato::report {

struct Axis {
    Axis(std::string l = "", bool lg = false) : label(std::move(l)), log(lg) {}
    std::string label;
    bool log = false;
    std::vector<std::string> categories;  // non-empty: categorical axis, x values are indices
    double include_lo = NAN, include_hi = NAN;  // values the range must include (e.g. 0, 1), if set
};

struct Series {
    std::string label;
    std::vector<double> x, y;
    std::vector<std::string> tips;  // per point, optional
    bool line = true;               // connect the points
    bool hollow = false;            // open markers (and not counted as marks)
    std::string color;              // empty: from the palette
};

struct RefLine {
    double x0, y0, x1, y1;
    std::string label;
    bool dashed = false;
};

class Plot {
public:
    Plot(std::string id, std::string title, Axis x, Axis y, int width = 560, int height = 340);
    void add(Series s) { m_series.push_back(std::move(s)); }
    void add(RefLine l) { m_lines.push_back(std::move(l)); }
    // The marks this plot will draw (finite points, positive on log axes; hollow ones excluded).
    size_t expected_marks() const;
    std::string svg() const;

private:
    std::string m_id, m_title;
    Axis m_x, m_y;
    int m_w, m_h;
    std::vector<Series> m_series;
    std::vector<RefLine> m_lines;
};

struct BarGroup {
    std::string name;
    std::vector<std::pair<std::string, double>> bars;  // label, value
};

// One group of bars per entry (bars of the same label share a colour); y from 0 to y_max
// (0: from the data).
std::string bar_chart(const std::string& id, const std::string& title, const std::string& y_label,
                      const std::vector<BarGroup>& groups, double y_max = 0, int width = 560, int height = 320);

// 1234567 -> "1.23M"; 0.000123 -> "1.23e-04" (three significant digits).
std::string format_number(double v);
// Distinct colours for series/bars.
const std::string& palette(size_t i);
std::string xml_escape(const std::string& s);

}  // namespace sfumato::report
