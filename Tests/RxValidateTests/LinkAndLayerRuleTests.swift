import Foundation
import RxValidate
import Testing

/// The rules for where a PDF's links lead and what its layers show (pdfrules.cpp), on small
/// documents built here: the edges the fixtures (FixtureVerdictTests) do not reach one by one.
@Suite struct LinkAndLayerRuleTests {
    /// A one-page document: `catalog` goes into the catalog, `annotation` (if any) is the page's
    /// only annotation, `extra` are further objects (numbered from 5).
    static func document(catalog: String = "", annotation: String? = nil, extra: [String] = []) -> [UInt8] {
        PDFWalkLimitTests.pdf(
            [
                "<< /Type /Catalog /Pages 2 0 R \(catalog) >>",
                "<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
                "<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792]\(annotation == nil ? "" : " /Annots [4 0 R]") >>",
                annotation ?? "<< >>"
            ] + extra)
    }

    static func link(_ action: String) -> String {
        "<< /Type /Annot /Subtype /Link /Rect [56 600 356 630] /Border [0 0 0] /P 3 0 R /A \(action) >>"
    }

    func verdict(_ bytes: [UInt8]) -> String {
        do {
            _ = try AttachmentValidator.validate(bytes, limits: ValidationLimits())
            return "accepted"
        } catch { return error.message }
    }

    static let opensFiles = "PDF has a link that opens a file on the reader's machine or network"

    @Test func networkPathsAreFileLocationsHoweverWritten() {
        for address in ["//198.51.100.7/share/x.pdf", " \t//host/x", "\\\\\\\\host\\\\share\\\\x", "/\\\\host/x"] {
            let found = verdict(Self.document(annotation: Self.link("<< /S /URI /URI (\(address)) >>")))
            #expect(found.hasPrefix(Self.opensFiles + " (a "), "\(address): \(found)")
            #expect(found.contains("network-path link in object 4)"), "\(address): \(found)")
        }
        // A relative path, a web address, a mail address: as before.
        for address in ["notes/fitting.pdf", "https://example.org/lenses", "mailto:shop@example.org", "/a/b"] {
            #expect(
                verdict(Self.document(annotation: Self.link("<< /S /URI /URI (\(address)) >>"))) == "accepted",
                "\(address)")
        }
    }

    @Test func aBaseAddressIsJudgedAndEveryRelativeLinkWithIt() {
        let relative = Self.link("<< /S /URI /URI (report.pdf) >>")
        #expect(
            verdict(Self.document(catalog: "/URI << /Base (file:///mnt/share/) >>", annotation: relative))
                == Self.opensFiles + " (a file: /URI /Base in object 1)")
        // The base is judged even where no link uses it, and from an object of its own.
        #expect(
            verdict(Self.document(catalog: "/URI 5 0 R", extra: ["<< /Base (SMB://host/share/) >>"]))
                == Self.opensFiles + " (a smb: /URI /Base in object 5)")
        #expect(
            verdict(Self.document(catalog: "/URI << /Base (\\\\\\\\host\\\\share\\\\) >>", annotation: relative))
                == Self.opensFiles + " (a \\\\host\\... network-path /URI /Base in object 1)")
        #expect(
            verdict(Self.document(catalog: "/URI << /Base (java\tscript:alert\\(1\\)//) >>", annotation: relative))
                == "PDF contains JavaScript (a javascript: /URI /Base in object 1)")
        // A web base: relative links stay web addresses.
        for base in ["https://example.org/lenses/", "https://example.org/lenses", "notes/"] {
            #expect(
                verdict(Self.document(catalog: "/URI << /Base (\(base)) >>", annotation: relative)) == "accepted",
                "\(base)")
        }
    }

    static let differentContent = "PDF shows different content to different readers"
    static let layers = "/OCProperties << /OCGs [5 0 R] /D << /Order [5 0 R] >> >>"

    @Test func aMembershipHiddenWhileEveryLayerIsOnIsRefused() {
        let layer = "<< /Type /OCG /Name (Layer) >>"
        for membership in [
            "<< /Type /OCMD /OCGs [5 0 R] /P /AllOff >>", "<< /Type /OCMD /OCGs 5 0 R /P /AnyOff >>",
            "<< /Type /OCMD /VE [/Not 5 0 R] >>", "<< /Type /OCMD /VE [/And 5 0 R [/Not 5 0 R]] >>"
        ] {
            let found = verdict(Self.document(catalog: Self.layers, extra: [layer, membership]))
            #expect(found.hasPrefix(Self.differentContent + " (content hidden while every layer is on"), "\(found)")
            // Without optional content in the catalog, readers ignore memberships alike.
            #expect(verdict(Self.document(extra: [layer, membership])) == "accepted", "\(membership)")
        }
        for membership in [
            "<< /Type /OCMD /OCGs [5 0 R] >>", "<< /Type /OCMD /OCGs [5 0 R] /P /AllOn >>",
            "<< /Type /OCMD /VE [/Or 5 0 R [/Not 5 0 R]] >>", "<< /Type /OCMD /P /AllOff >>"
        ] {
            #expect(
                verdict(Self.document(catalog: Self.layers, extra: [layer, membership])) == "accepted", "\(membership)")
        }
    }

    @Test func layersHiddenOrSwitchedAreRefused() {
        let layer = "<< /Type /OCG /Name (Layer) >>"
        let cases: [(String, [String], String)] = [
            (
                "/OCProperties << /OCGs [5 0 R] /D << /BaseState /OFF /ON [] >> >>", [layer],
                "layers hidden in the default view (/BaseState /OFF)"
            ),
            (
                Self.layers, ["<< /Type /OCG /Name (Layer) /Usage << /Zoom << /min 4 >> >> >>"],
                "a layer shown or hidden by how the file is read (/Usage /Zoom)"
            ),
            (
                Self.layers, [layer],
                "a /SetOCGState action, which switches layers, in object 4"
            )
        ]
        for (catalog, extra, what) in cases {
            let annotation =
                what.contains("SetOCGState") ? Self.link("<< /S /SetOCGState /State [/Toggle 5 0 R] >>") : nil
            let found = verdict(Self.document(catalog: catalog, annotation: annotation, extra: extra))
            #expect(found.hasPrefix(Self.differentContent + " (" + what), "\(found)")
        }
    }

    @Test func namedActionsAreRefusedOnlyWhenTheyRunByThemselves() {
        #expect(
            verdict(Self.document(catalog: "/OpenAction << /S /Named /N /Print >>"))
                == "PDF prints by itself, without a click (a /Named /Print action in /OpenAction, in object 1)")
        #expect(
            verdict(
                Self.document(
                    catalog: "/OpenAction << /S /GoTo /D [3 0 R /Fit] /Next << /S /Named /N /NextPage >> >>"))
                == "PDF runs a viewer command by itself, without a click (a /Named /NextPage action in /OpenAction, in object 1)"
        )
        let page = Self.document(
            annotation: "<< /Type /Annot /Subtype /Link /Rect [0 0 9 9] /AA << /E << /S /Named /N /SaveAs >> >> >>")
        #expect(
            verdict(page).hasPrefix("PDF runs a viewer command by itself, without a click (a /Named action in /AA /E,"))
        // Hiding a stamp or clearing a form when the file opens: poppler, which checks and
        // previews it, runs no action, so a reader that does shows other content.
        for action in ["<< /S /Hide /T 4 0 R /H true >>", "<< /S /ResetForm >>"] {
            let found = verdict(Self.document(catalog: "/OpenAction \(action)"))
            #expect(found.hasPrefix(Self.differentContent + " (a /"), "\(action): \(found)")
            #expect(found.hasSuffix(" action in /OpenAction, in object 1)"), "\(action): \(found)")
        }
        // Clicked, a named action is the reader's own choice.
        #expect(verdict(Self.document(annotation: Self.link("<< /S /Named /N /Print >>"))) == "accepted")
    }
}
