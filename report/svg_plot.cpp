#include "report/svg_plot.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>

namespace sfumato::report {

namespace {

constexpr int kLeft = 72, kTop = 34, kBottom = 48, kRight = 18, kLegend = 230;
constexpr size_t kLegendChars = 36;

std::string num(double v) {
    char b[32];
    std::snprintf(b, sizeof b, "%.1f", v);
    return b;
}

struct Scale {
    double lo = 0, hi = 1;
    bool log = false;
    double p0 = 0, p1 = 1;  // pixel range
    double operator()(double v) const {
        const double a = log ? std::log10(v) : v;
        return p0 + (a - lo) / (hi - lo) * (p1 - p0);
    }
};

bool usable(double v, bool log) { return std::isfinite(v) && (!log || v > 0); }

double nice_step(double span, int target) {
    const double raw = span / std::max(1, target);
    const double mag = std::pow(10.0, std::floor(std::log10(raw)));
    const double f = raw / mag;
    return (f < 1.5 ? 1 : f < 3 ? 2 : f < 7 ? 5 : 10) * mag;
}

// Fits lo/hi (in axis units: log10 for log axes) around the data and returns tick values.
std::vector<double> fit(Scale& s, double mn, double mx, bool log, size_t categories) {
    std::vector<double> ticks;
    if (categories) {
        s.lo = -0.5;
        s.hi = static_cast<double>(categories) - 0.5;
        for (size_t i = 0; i < categories; ++i) ticks.push_back(static_cast<double>(i));
        return ticks;
    }
    if (!(mn <= mx)) {
        mn = log ? 1 : 0;
        mx = log ? 10 : 1;
    }
    if (log) {
        double a = std::floor(std::log10(mn)), b = std::ceil(std::log10(mx));
        if (b <= a) b = a + 1;
        s.lo = a;
        s.hi = b;
        const bool fine = b - a <= 2;
        for (double e = a; e <= b + 1e-9; e += 1) {
            ticks.push_back(std::pow(10.0, e));
            if (fine && e < b) {
                ticks.push_back(2 * std::pow(10.0, e));
                ticks.push_back(5 * std::pow(10.0, e));
            }
        }
        return ticks;
    }
    if (mn == mx) {
        const double d = mn == 0 ? 1 : std::fabs(mn) * 0.1;
        mn -= d;
        mx += d;
    }
    const double step = nice_step(mx - mn, 5);
    s.lo = std::floor(mn / step) * step;
    s.hi = std::ceil(mx / step) * step;
    for (double t = s.lo; t <= s.hi + step * 1e-6; t += step) ticks.push_back(std::fabs(t) < step * 1e-9 ? 0 : t);
    return ticks;
}

std::string text(double x, double y, const std::string& s, const char* anchor = "middle", const char* extra = "") {
    return "<text x=\"" + num(x) + "\" y=\"" + num(y) + "\" text-anchor=\"" + anchor + "\"" + extra + ">" + xml_escape(s) +
           "</text>";
}

}  // namespace

std::string xml_escape(const std::string& s) {
    std::string o;
    for (char c : s) {
        switch (c) {
            case '&': o += "&amp;"; break;
            case '<': o += "&lt;"; break;
            case '>': o += "&gt;"; break;
            case '"': o += "&quot;"; break;
            default: o += c;
        }
    }
    return o;
}

std::string format_number(double v) {
    if (!std::isfinite(v)) return std::isnan(v) ? "-" : (v > 0 ? "inf" : "-inf");
    if (v == 0) return "0";
    const double a = std::fabs(v);
    char b[32];
    struct Unit {
        double from, f;
        const char* s;
    };
    for (const Unit u : {Unit{1e15, 1e15, "P"}, Unit{1e12, 1e12, "T"}, Unit{1e9, 1e9, "G"}, Unit{1e6, 1e6, "M"}, Unit{1e4, 1e3, "k"}}) {
        if (a >= u.from) {
            std::snprintf(b, sizeof b, "%.3g%s", v / u.f, u.s);
            return b;
        }
    }
    if (a >= 0.01) std::snprintf(b, sizeof b, "%.4g", v);
    else std::snprintf(b, sizeof b, "%.2e", v);
    return b;
}

const std::string& palette(size_t i) {
    static const std::vector<std::string> p = {"#1f77b4", "#d62728", "#2ca02c", "#ff7f0e", "#9467bd",
                                               "#8c564b", "#e377c2", "#17becf", "#bcbd22", "#7f7f7f"};
    return p[i % p.size()];
}

Plot::Plot(std::string id, std::string title, Axis x, Axis y, int width, int height)
    : m_id(std::move(id)), m_title(std::move(title)), m_x(std::move(x)), m_y(std::move(y)), m_w(width), m_h(height) {}

size_t Plot::expected_marks() const {
    size_t n = 0;
    for (const auto& s : m_series) {
        if (s.hollow) continue;
        for (size_t i = 0; i < s.x.size() && i < s.y.size(); ++i)
            n += usable(s.x[i], m_x.log && m_x.categories.empty()) && usable(s.y[i], m_y.log);
    }
    return n;
}

std::string Plot::svg() const {
    const bool xlog = m_x.log && m_x.categories.empty();
    const bool legend = m_series.size() > 1 || (m_series.size() == 1 && !m_series[0].label.empty()) || !m_lines.empty();
    const int w = m_w + (legend ? kLegend : 0);
    double xmn = std::numeric_limits<double>::infinity(), xmx = -xmn, ymn = xmn, ymx = -xmn;
    auto take = [&](double x, double y) {
        if (!usable(x, xlog) || !usable(y, m_y.log)) return;
        xmn = std::min(xmn, x);
        xmx = std::max(xmx, x);
        ymn = std::min(ymn, y);
        ymx = std::max(ymx, y);
    };
    for (const auto& s : m_series)
        for (size_t i = 0; i < s.x.size() && i < s.y.size(); ++i) take(s.x[i], s.y[i]);
    for (const auto& l : m_lines) {
        take(l.x0, l.y0);
        take(l.x1, l.y1);
    }
    if (ymx >= ymn) {
        for (double v : {m_y.include_lo, m_y.include_hi}) {
            if (!usable(v, m_y.log)) continue;
            ymn = std::min(ymn, v);
            ymx = std::max(ymx, v);
        }
    }
    Scale sx, sy;
    sx.log = xlog;
    sy.log = m_y.log;
    const std::vector<double> xt = fit(sx, xmn, xmx, xlog, m_x.categories.size());
    const std::vector<double> yt = fit(sy, ymn, ymx, m_y.log, 0);
    sx.p0 = kLeft;
    sx.p1 = m_w - kRight;
    sy.p0 = m_h - kBottom;
    sy.p1 = kTop;

    std::string o = "<svg class=\"plot\" id=\"" + xml_escape(m_id) + "\" data-expected-marks=\"" + std::to_string(expected_marks()) +
                    "\" xmlns=\"http://www.w3.org/2000/svg\" width=\"" + std::to_string(w) + "\" height=\"" +
                    std::to_string(m_h) + "\" viewBox=\"0 0 " + std::to_string(w) + " " + std::to_string(m_h) + "\">\n";
    const std::string clip = "clip-" + xml_escape(m_id);
    o += "<defs><clipPath id=\"" + clip + "\"><rect x=\"" + num(sx.p0) + "\" y=\"" + num(sy.p1) + "\" width=\"" +
         num(sx.p1 - sx.p0) + "\" height=\"" + num(sy.p0 - sy.p1) + "\"/></clipPath></defs>\n";
    o += text(m_w / 2.0, 18, m_title, "middle", " class=\"title\"") + "\n";
    o += "<rect class=\"frame\" x=\"" + num(sx.p0) + "\" y=\"" + num(sy.p1) + "\" width=\"" + num(sx.p1 - sx.p0) + "\" height=\"" +
         num(sy.p0 - sy.p1) + "\"/>\n";
    for (double t : xt) {
        const double px = sx(t);
        o += "<line class=\"grid\" x1=\"" + num(px) + "\" y1=\"" + num(sy.p0) + "\" x2=\"" + num(px) + "\" y2=\"" + num(sy.p1) + "\"/>";
        const std::string lab = m_x.categories.empty() ? format_number(t) : m_x.categories[static_cast<size_t>(t)];
        o += text(px, sy.p0 + 15, lab) + "\n";
    }
    for (double t : yt) {
        const double py = sy(t);
        o += "<line class=\"grid\" x1=\"" + num(sx.p0) + "\" y1=\"" + num(py) + "\" x2=\"" + num(sx.p1) + "\" y2=\"" + num(py) + "\"/>";
        o += text(sx.p0 - 6, py + 4, format_number(t), "end") + "\n";
    }
    o += text((sx.p0 + sx.p1) / 2, m_h - 10, m_x.label) + "\n";
    o += "<text x=\"14\" y=\"" + num((sy.p0 + sy.p1) / 2) + "\" text-anchor=\"middle\" transform=\"rotate(-90 14 " +
         num((sy.p0 + sy.p1) / 2) + ")\">" + xml_escape(m_y.label) + "</text>\n";
    o += "<g clip-path=\"url(#" + clip + ")\">\n";
    for (const auto& l : m_lines) {
        if (!usable(l.x0, xlog) || !usable(l.x1, xlog) || !usable(l.y0, m_y.log) || !usable(l.y1, m_y.log)) continue;
        o += "<line class=\"ref\"" + std::string(l.dashed ? " stroke-dasharray=\"6 4\"" : "") + " x1=\"" + num(sx(l.x0)) +
             "\" y1=\"" + num(sy(l.y0)) + "\" x2=\"" + num(sx(l.x1)) + "\" y2=\"" + num(sy(l.y1)) + "\"><title>" +
             xml_escape(l.label) + "</title></line>\n";
    }
    for (size_t si = 0; si < m_series.size(); ++si) {
        const Series& s = m_series[si];
        const std::string color = s.color.empty() ? palette(si) : s.color;
        if (s.line) {
            std::string pts;
            for (size_t i = 0; i < s.x.size() && i < s.y.size(); ++i)
                if (usable(s.x[i], xlog) && usable(s.y[i], m_y.log)) pts += num(sx(s.x[i])) + "," + num(sy(s.y[i])) + " ";
            if (!pts.empty()) o += "<polyline class=\"line\" stroke=\"" + color + "\" points=\"" + pts + "\"/>\n";
        }
        const char* radius = s.x.size() > 40 ? "2.5" : "4";
        for (size_t i = 0; i < s.x.size() && i < s.y.size(); ++i) {
            if (!usable(s.x[i], xlog) || !usable(s.y[i], m_y.log)) continue;
            const std::string tip = i < s.tips.size() ? s.tips[i]
                                                      : (s.label.empty() ? "" : s.label + ": ") + format_number(s.x[i]) + ", " +
                                                            format_number(s.y[i]);
            o += std::string("<circle class=\"") + (s.hollow ? "bound" : "mark") + "\" cx=\"" + num(sx(s.x[i])) + "\" cy=\"" +
                 num(sy(s.y[i])) + "\" r=\"" + radius + "\" " + (s.hollow ? "fill=\"none\" stroke=\"" + color + "\"" : "fill=\"" + color + "\"") +
                 "><title>" + xml_escape(tip) + "</title></circle>\n";
        }
    }
    o += "</g>\n";
    if (legend) {
        double ly = kTop + 6;
        const double lx = m_w + 4;
        for (size_t si = 0; si < m_series.size(); ++si) {
            const std::string color = m_series[si].color.empty() ? palette(si) : m_series[si].color;
            o += "<circle cx=\"" + num(lx + 5) + "\" cy=\"" + num(ly - 4) + "\" r=\"4\" " +
                 (m_series[si].hollow ? "fill=\"none\" stroke=\"" + color + "\"" : "fill=\"" + color + "\"") + "/>";
            o += text(lx + 14, ly, m_series[si].label.size() > kLegendChars ? m_series[si].label.substr(0, kLegendChars - 1) + "…" : m_series[si].label,
                      "start", " class=\"legend\"") + "\n";
            ly += 15;
        }
        for (const auto& l : m_lines) {
            if (l.label.empty()) continue;
            o += "<line class=\"ref\" x1=\"" + num(lx) + "\" y1=\"" + num(ly - 4) + "\" x2=\"" + num(lx + 10) + "\" y2=\"" + num(ly - 4) +
                 "\"" + (l.dashed ? " stroke-dasharray=\"3 2\"" : "") + "/>";
            o += text(lx + 14, ly, l.label.size() > kLegendChars ? l.label.substr(0, kLegendChars - 1) + "…" : l.label, "start", " class=\"legend\"") + "\n";
            ly += 15;
        }
    }
    o += "</svg>\n";
    return o;
}

std::string bar_chart(const std::string& id, const std::string& title, const std::string& y_label,
                      const std::vector<BarGroup>& groups, double y_max, int width, int height) {
    std::vector<std::string> labels;
    double mx = y_max;
    size_t marks = 0;
    for (const auto& g : groups) {
        for (const auto& [l, v] : g.bars) {
            if (std::find(labels.begin(), labels.end(), l) == labels.end()) labels.push_back(l);
            if (std::isfinite(v)) {
                mx = std::max(mx, v);
                ++marks;
            }
        }
    }
    if (!(mx > 0)) mx = 1;
    Scale sy;
    const std::vector<double> yt = fit(sy, 0, mx, false, 0);
    const int w = width + kLegend;
    sy.p0 = height - kBottom;
    sy.p1 = kTop;
    std::string o = "<svg class=\"plot\" id=\"" + xml_escape(id) + "\" data-expected-marks=\"" + std::to_string(marks) +
                    "\" xmlns=\"http://www.w3.org/2000/svg\" width=\"" + std::to_string(w) + "\" height=\"" +
                    std::to_string(height) + "\" viewBox=\"0 0 " + std::to_string(w) + " " + std::to_string(height) + "\">\n";
    o += text(width / 2.0, 18, title, "middle", " class=\"title\"") + "\n";
    const double x0 = kLeft, x1 = width - kRight;
    o += "<rect class=\"frame\" x=\"" + num(x0) + "\" y=\"" + num(sy.p1) + "\" width=\"" + num(x1 - x0) + "\" height=\"" +
         num(sy.p0 - sy.p1) + "\"/>\n";
    for (double t : yt) {
        const double py = sy(t);
        o += "<line class=\"grid\" x1=\"" + num(x0) + "\" y1=\"" + num(py) + "\" x2=\"" + num(x1) + "\" y2=\"" + num(py) + "\"/>";
        o += text(x0 - 6, py + 4, format_number(t), "end") + "\n";
    }
    o += "<text x=\"14\" y=\"" + num((sy.p0 + sy.p1) / 2) + "\" text-anchor=\"middle\" transform=\"rotate(-90 14 " +
         num((sy.p0 + sy.p1) / 2) + ")\">" + xml_escape(y_label) + "</text>\n";
    const double gw = (x1 - x0) / std::max<size_t>(1, groups.size());
    for (size_t gi = 0; gi < groups.size(); ++gi) {
        const auto& g = groups[gi];
        const double gx = x0 + gi * gw;
        const double bw = std::min(40.0, (gw - 12) / std::max<size_t>(1, g.bars.size()));
        const double start = gx + (gw - bw * g.bars.size()) / 2;
        for (size_t bi = 0; bi < g.bars.size(); ++bi) {
            const auto& [l, v] = g.bars[bi];
            if (!std::isfinite(v)) continue;
            const size_t ci = static_cast<size_t>(std::find(labels.begin(), labels.end(), l) - labels.begin());
            const double top = sy(std::max(0.0, v)), base = sy(0);
            o += "<rect class=\"mark\" fill=\"" + palette(ci) + "\" x=\"" + num(start + bi * bw + 1) + "\" y=\"" + num(top) +
                 "\" width=\"" + num(std::max(1.0, bw - 2)) + "\" height=\"" + num(std::max(0.5, base - top)) + "\"><title>" +
                 xml_escape(g.name + " " + l + ": " + format_number(v)) + "</title></rect>\n";
        }
        o += text(gx + gw / 2, sy.p0 + 15, g.name) + "\n";
    }
    double ly = kTop + 6;
    for (size_t i = 0; i < labels.size(); ++i) {
        o += "<rect x=\"" + num(width + 4.0) + "\" y=\"" + num(ly - 9) + "\" width=\"10\" height=\"10\" fill=\"" + palette(i) + "\"/>";
        o += text(width + 18.0, ly, labels[i], "start", " class=\"legend\"") + "\n";
        ly += 15;
    }
    o += "</svg>\n";
    return o;
}

}  // namespace sfumato::report
