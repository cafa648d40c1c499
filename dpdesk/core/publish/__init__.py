"""What a release publishes and how it is reviewed: the output files, the PDF report and its charts, the release
package, and the officer's review of a package."""
