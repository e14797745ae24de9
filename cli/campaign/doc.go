// Package campaign is `nodeproof campaign`: it runs one shard of a
// campaign plan (package campaign) and writes the shard's file, which
// `nodeproof report --merge` combines with the others into one report. It
// is the command the pods of a Kubernetes Indexed Job run
// (deploy/campaign/job.yaml).
package campaign
