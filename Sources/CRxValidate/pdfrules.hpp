// Rules the object walk (pdfwalk.cpp) applies to what a reader does with a PDF beyond drawing
// it: where its links lead (each judged alone, and a relative one as resolved against the
// document's base address), and whether its optional content (layers) lets one reader see
// other numbers than another. Kept apart from the walk so each rule is one small function of the
// objects it reads; pdfrules.cpp has the reasons.
#ifndef RX_PDFRULES_HPP
#define RX_PDFRULES_HPP

#ifndef POINTERHOLDER_TRANSITION
#define POINTERHOLDER_TRANSITION 4
#endif
#include <qpdf/QPDFObjectHandle.hh>

#include <optional>
#include <string>

namespace rx_pdf_rules {

// What a rule found: the refusal code (rx_pdf_refusal), the headline of the message and what
// was found, as "PDF contains JavaScript" and "a javascript: link" (the walk adds where).
struct Found {
    int refusal;
    std::string headline;
    std::string what;
};

// A link (a /URI action's address) as a reader takes it, with `kind` naming it in the message
// ("link", "/URI /Base"). Refused: javascript:, every scheme other than http, https, mailto and
// tel, and network paths (//host/share, \\host\share), which a reader opening the file from
// disk resolves to a UNC or SMB location.
std::optional<Found> judge_link(const std::string &uri, const std::string &kind);

// A relative link resolved against the document's base address (the catalog's /URI /Base, PDF
// 32000-1 12.6.4.7), as poppler resolves it; an absolute link is returned as it is.
std::string resolve_link(const std::string &base, const std::string &link);

// True when `uri` has no scheme: a reader resolves it against the base address, if any.
bool is_relative_link(const std::string &uri);

// The catalog's /OCProperties: refused when the default view hides a layer or another
// configuration, an automatic state (/AS: viewing, printing, exporting) may show other layers.
std::optional<Found> judge_optional_content(QPDFObjectHandle properties);

// One dictionary of a document that has optional content: a layer (/OCG) whose /Usage shows or
// hides it when printed, viewed at some zoom, or exported; a membership (/OCMD) that hides its
// content when every layer is on, so that only readers that ignore layers show it.
std::optional<Found> judge_optional_content_dictionary(QPDFObjectHandle dict);

// An action that runs by itself (/OpenAction, /AA): a named action (/Named: print, go to
// another page, any menu command) is refused, as the reader did not ask for it; so are /Hide
// and /ResetForm, which change what a reader that runs them shows.
std::optional<Found> judge_automatic_action(QPDFObjectHandle action);

}  // namespace rx_pdf_rules

#endif
